#!/usr/bin/env bash
# NVDEC measurements on a GPU machine, 1080p H.264 (issue: hardware codecs):
# decode-only throughput of NVDEC against software decoding on all cores
# (ffmpeg, same libraries), then NVDEC + pencil + libx264 ultrafast against
# `ffmpeg -hwaccel cuda ... -c:v libx264 -preset ultrafast`, and the
# host<->device bytes per frame from the stats.
# Usage: scripts/nvdec-check.sh OUTDIR   (STYLEPIPE=path/to/stylepipe, RUNS=3)
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/nvdec-check.sh OUTDIR}")
mkdir -p "$out"
bin=${STYLEPIPE:-build-gpu/stylepipe}
clip="$out/nvdec_in.mp4"
frames=600
[ -e "$clip" ] || ffmpeg -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 20 -c:v libx264 -preset veryfast \
  -pix_fmt yuv420p "$clip"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
fps() { awk -v n="$frames" -v t="$1" 'BEGIN { printf "%.0f", n * 1000 / t }'; }
runs=${RUNS:-3}
declare -A t
for i in $(seq "$runs"); do
  t[sw]+="$(ms ffmpeg -i "$clip" -f null -) "
  t[hw]+="$(ms ffmpeg -hwaccel cuda -hwaccel_output_format cuda -i "$clip" -f null -) "
  t[ff]+="$(ms ffmpeg -y -hwaccel cuda -i "$clip" -c:v libx264 -preset ultrafast -crf 18 "$out/ff.mp4") "
  t[sp]+="$(ms "$bin" run configs/bench/pencil.yaml -i "$clip" -o "$out/sp.mp4" -y --hwdec nvdec --codec libx264 \
    --preset ultrafast --crf 18 --progress none --stats-json "$out/nvdec_stats.json") "
done
declare -A m
for k in sw hw ff sp; do m[$k]=$(printf '%s\n' ${t[$k]} | median); done
echo "decode only, 1080p H.264, $frames frames: software (all cores) ${m[sw]} ms = $(fps "${m[sw]}") fps; NVDEC ${m[hw]} ms = $(fps "${m[hw]}") fps"
echo "ffmpeg -hwaccel cuda -> libx264 ultrafast: ${m[ff]} ms ($(fps "${m[ff]}") fps); stylepipe NVDEC -> pencil -> libx264 ultrafast: ${m[sp]} ms ($(fps "${m[sp]}") fps); ratio $(awk -v a="${m[sp]}" -v b="${m[ff]}" 'BEGIN{printf "%.3f", a/b}')"
echo "runs (ms): ${t[*]}"
python3 - "$out/nvdec_stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["transfer_bytes"]
print(f"decoder {s['decoder']}; per frame: host->device {t['host_to_device_per_frame']:.0f} B, device->host {t['device_to_host_per_frame']:.0f} B; "
      f"pencil p50 {s['stages'][0]['ms']['p50']:.3f} ms")
PY
