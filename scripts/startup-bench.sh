#!/usr/bin/env bash
# Start-up of a 10-frame 1080p clip (pencil -> libx264 medium), issue 29:
# the wall time of whole processes (median of 5) for each way of running it,
# each with its --stats-json steps and a --log-level debug log (ms since
# start) of the middle run; then the floor under any CUDA process:
# scripts/nvdec-sessions.cpp (cuInit and a context; NVDEC sessions made at
# once from many threads), and ffmpeg on the same clip.
# STYLEPIPE is the binary (default build-gpu/stylepipe); VISIBLE="0 all"
# runs each way with only GPU 0 visible and with all visible.
# Usage: scripts/startup-bench.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/devkit-env.sh
out=$(realpath -m "${1:?usage: scripts/startup-bench.sh OUTDIR}")
mkdir -p "$out"
bin=${STYLEPIPE:-build-gpu/stylepipe}
status=0
clip=$out/ten.mp4
ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -f lavfi -i sine -frames:v 10 -t 0.34 \
  -c:v libx264 -pix_fmt yuv420p -c:a aac "$clip" || exit 1

wall_median() {  # label, command... : five runs, the median and the range
  local label=$1 i s e
  shift
  for i in 1 2 3 4 5; do
    s=$(date +%s.%N)
    "$@" >"$out/last.log" 2>&1 || { tail -3 "$out/last.log" >&2; status=1; }
    e=$(date +%s.%N)
    [ "$i" = 3 ] && cp "$out/last.log" "$out/debug_$label.log"
    awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f\n", b-a}'
  done | sort -n | awk -v l="$label" '{t[NR]=$1} END{printf "%-34s wall median %.3f s (min %.3f, max %.3f)\n", l, t[3], t[1], t[5]}'
}

# What a GPU was found without (NVENC) is kept between processes
# (codecs/nvenc.h): the runs share this cache; a "first_" run empties it first.
export XDG_CACHE_HOME=$out/cache
stylepipe_ten() {  # label, visible ("0" or "all"), extra flags...
  local label=$1 visible=$2 fresh=()
  shift 2
  local env_visible=(); [ "$visible" = all ] || env_visible=(CUDA_VISIBLE_DEVICES="$visible")
  [[ $label == first_* ]] && fresh=(sh -c 'rm -rf "$XDG_CACHE_HOME"; exec "$@"' fresh)
  wall_median "$label" "${fresh[@]}" env "${env_visible[@]}" "$bin" run configs/pencil.yaml -i "$clip" -o "$out/ten_out.mp4" -y \
    --progress none --log-level debug --stats-json "$out/stats_$label.json" "$@"
  python3 - "$out/stats_$label.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("    " + "; ".join("%s %.3f" % (x["step"], x["seconds"]) for x in s["startup_seconds"]))
print("    backend %s, decoder %s%s, encoder %s; the run's wall_seconds %.3f" % (
    s["backend"]["name"], s["decoder"]["name"],
    " (" + s["decoder"]["reason"] + ")" if s["decoder"].get("reason") else "", s["encoder"]["name"], s["wall_seconds"]))
PY
}

for visible in ${VISIBLE:-0 all}; do
  tag=$([ "$visible" = all ] && echo all || echo gpu$visible)
  stylepipe_ten "first_$tag" "$visible"
  stylepipe_ten "default_$tag" "$visible"
  stylepipe_ten "nvdec_$tag" "$visible" --hwdec nvdec
done
stylepipe_ten none_software_enc 0 --hwdec none --encoder software
stylepipe_ten cpu_backend 0 --backend cpu

# The floor: what the driver costs a process that does nothing else.
if pkg-config --exists ffnvcodec; then
  g++ -std=c++20 -O2 $(pkg-config --cflags ffnvcodec) \
    -o "$out/nvdec-sessions" scripts/nvdec-sessions.cpp -ldl -lpthread || status=1
  for n in 0 1 4 16; do
    wall_median "cuda_floor_${n}_sessions" env CUDA_VISIBLE_DEVICES=0 "$out/nvdec-sessions" "$n"
    sed 's/^/    /' "$out/debug_cuda_floor_${n}_sessions.log"
  done
  wall_median "cuda_floor_0_sessions_all_visible" "$out/nvdec-sessions" 0
fi
for hw in "" "-hwaccel cuda"; do
  wall_median "ffmpeg${hw:+_hwaccel}" ffmpeg -hide_banner -v error -y $hw -i "$clip" -c:v libx264 -c:a copy \
    "$out/ten_ff.mp4"
done
rm -rf "$out"/*.mp4 "$out/last.log" "$out/nvdec-sessions" "$out/cache"
exit $status
