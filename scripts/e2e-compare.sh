#!/usr/bin/env bash
# Times the same transcode (1080p H.264 + AAC in, libx264 out, audio copied)
# through ffmpeg and through stylepipe's conversion-only chain (software
# decoding in both: the same codec work), RUNS runs each
# (default 3) on a CLIP_SECONDS-long clip (default 20),
# and reports medians. SP_FLAGS replaces stylepipe's codec flags (default
# "--hwdec none --encoder software"; "" measures the defaults). CONFIG
# replaces the chain (default configs/identity.yaml: the codecs alone).
# CLIP replaces the clean testsrc2 clip with another input (for example the
# film-grain clip of scripts/make-bench-clip.sh, where the encoder works harder).
# Usage: scripts/e2e-compare.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?}
mkdir -p "$out"
bin=${STYLEPIPE:-build-gpu/stylepipe}
config=${CONFIG:-configs/identity.yaml}
preset=${PRESET:-ultrafast}
seconds=${CLIP_SECONDS:-20}
read -r -a flags <<<"${SP_FLAGS---hwdec none --encoder software}"
clip=${CLIP:-$out/e2e_in_${seconds}s.mp4}
[ -e "$clip" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 \
  -f lavfi -i sine=frequency=440:sample_rate=48000 -t "$seconds" -c:v libx264 -preset veryfast -pix_fmt yuv420p \
  -c:a aac "$clip"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2; e=$(date +%s.%N); awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f\n", b-a}'; }
ff=(); sp=()
for i in $(seq 1 "${RUNS:-3}"); do
  # A fresh file each time: replacing the last run's output (GBs of dots)
  # frees its blocks at the final rename, synchronously (the lent machine's
  # ext4 is mounted with discard): 1.3-1.5 s for 2.5 GB (docs/perf.md, halftone v11).
  rm -f "$out/e2e_ffmpeg.mp4" "$out/e2e_stylepipe.mp4"
  ff+=("$(timeit ffmpeg -hide_banner -y -i "$clip" -c:v libx264 -preset "$preset" -crf 18 -c:a copy "$out/e2e_ffmpeg.mp4")")
  sp+=("$(timeit "$bin" run "$config" -i "$clip" -o "$out/e2e_stylepipe.mp4" -y "${flags[@]}" --codec libx264 \
    --preset "$preset" --crf 18 --progress none --stats-json "$out/e2e_stats.json")")
done
ffm=$(printf '%s\n' "${ff[@]}" | median)
spm=$(printf '%s\n' "${sp[@]}" | median)
ratio=$(awk -v a="$spm" -v b="$ffm" 'BEGIN{printf "%.3f", a/b}')
echo "e2e $(basename "$clip") x264 $preset, $config, stylepipe flags [${flags[*]}]: ffmpeg ${ffm}s, stylepipe ${spm}s, ratio ${ratio} (runs: ffmpeg ${ff[*]}; stylepipe ${sp[*]})" \
  | tee "$out/e2e.txt"
