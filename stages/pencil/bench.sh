#!/usr/bin/env bash
# The pencil numbers of docs/perf.md, on the GPU machine after
# `scripts/gpu-dev.sh "test_pencil stylepipe"` (binary in build-gpu-dev).
# Usage: stages/pencil/bench.sh [profile]   (profile: per-kernel times and stalls by ncu)
set -uo pipefail
cd "$(dirname "$0")/../.."
S=build-gpu-dev/stylepipe
C=configs/bench
row() { grep -E "^pencil|cg_|device-resident" | sed -E 's/ +/ /g'; }
for size in 1920x1080 2560x1920 3840x2160; do
  echo "== fast $size"; $S bench --config $C/pencil.yaml --size $size --frames 200 --warmup 20 | row
done
echo "== lu2012 1920x1080"; $S bench --config $C/pencil_lu2012.yaml --size 1920x1080 --frames 100 --warmup 20 | row
echo "== cpu fast 2560x1920 ($(nproc) threads)"
$S bench --config $C/pencil.yaml --size 2560x1920 --frames 10 --warmup 2 --backend cpu | grep -E "^pencil" | sed -E 's/ +/ /g'
if [ "${1:-}" = profile ]; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  echo "== ncu fast 1920x1080, one frame"
  "$NCU" --section SpeedOfLight --launch-skip 60 --launch-count 12 \
    $S bench --config $C/pencil.yaml --size 1920x1080 --frames 8 --warmup 4 2>&1 |
    grep -E "^  [a-zA-Z_:<>0-9 ]+(\(|$)|Duration" | grep -vE "rgba_to|yuv420_to" | sed -E 's/\(RgbaView.*|\(const .*|  +/ /g' | paste - - | head -12
  echo "== ncu stalls classify/draw"
  "$NCU" --section Occupancy --section WarpStateStats --section LaunchStats -k regex:"classify|draw" --launch-skip 4 --launch-count 2 \
    $S bench --config $C/pencil.yaml --size 1920x1080 --frames 4 --warmup 2 2>&1 |
    grep -E "kernel|Registers Per|Achieved Occ|Theoretical Occ|Waves Per SM|Warp Cycles Per Issued|stall|Block Limit" | cut -c1-240 | head -30
  echo "== ncu lu2012"
  "$NCU" --section SpeedOfLight -k regex:cg_kernel --launch-skip 3 --launch-count 1 \
    $S bench --config $C/pencil_lu2012.yaml --size 1920x1080 --frames 4 --warmup 2 2>&1 | grep -E "Duration|Throughput" | sed -E 's/  +/ /g'
fi
