#!/usr/bin/env bash
# Measurements quoted in README.md, on a GPU machine after
#   EXCLUDE_STAGES=... scripts/gpu-dev.sh "test_lowpoly stylepipe"
# Usage: stages/lowpoly/measure.sh OUTDIR [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: measure.sh OUTDIR [BUILD_DIR]}
sp=${2:-build-gpu-dev}/stylepipe
mkdir -p "$out"
for size in 1920x1080 3840x2160; do
  "$sp" bench --config configs/bench/lowpoly.yaml --size $size --frames 200 --warmup 20 --json "$out/bench_$size.json" |
    grep -E "^(lowpoly|chain|device)|^  "
done
# The Voronoi diagnostic (1+JFA+2, 2x2 squares, scan, comparison with the exact mesh) and its counters.
"$sp" bench --config configs/bench/lowpoly_voronoi.yaml --size 1920x1080 --frames 50 --warmup 5 \
  --json "$out/bench_voronoi_1920x1080.json" | grep -E "^(lowpoly|chain)|^  "
# The issue's route as the mesh (mesh: squares): JFA + squares + certification + repair, same output.
for size in 1920x1080 3840x2160; do
  "$sp" bench --config configs/bench/lowpoly_squares.yaml --size $size --frames 200 --warmup 20 \
    --json "$out/bench_squares_$size.json" | grep -E "^(lowpoly|chain)|^  "
done
"$sp" bench --config configs/bench/lowpoly.yaml --size 1920x1080 --frames 20 --warmup 3 --backend cpu \
  --json "$out/bench_cpu_1920x1080.json" | grep -E "^lowpoly"
# End to end on a generated moving clip (FFmpeg's testsrc2), with the per-phase counters.
for cfg in configs/bench/lowpoly.yaml stages/lowpoly/temporal.yaml; do
  name=$(basename "$cfg" .yaml)
  "$sp" run "$cfg" -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=10" -o "$out/e2e_$name.mp4" -y \
    --stats-json "$out/e2e_$name.json" --progress none
  python3 - "$out/e2e_$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def walk(o, path=""):
    if isinstance(o, dict):
        for k, v in o.items(): yield from walk(v, f"{path}.{k}" if path else k)
    elif isinstance(o, list):
        for i, v in enumerate(o): yield from walk(v, f"{path}[{i}]")
    else:
        yield path, o
for k, v in walk(d):
    if any(s in k for s in ("fps", "counters", "stages[0].ms.p50", "stages[0].ms.mean")) and ("mean" in k or "fps" in k or "p50" in k):
        print(sys.argv[1].split("/")[-1], k, v)
PY
done
