#!/usr/bin/env bash
# On a GPU machine: build for the local architecture, run every test (GPU
# tests included), run compute-sanitizer on the GPU tests, run bench at three
# sizes for each config, and compare an end-to-end transcode with ffmpeg.
# Usage: scripts/gpu-check.sh OUTDIR [quick]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/gpu-check.sh OUTDIR}")
mode=${2:-full}
mkdir -p "$out"
status=0
step() { echo; echo "=== $* ==="; }

. scripts/devkit-env.sh
generator=(-G Ninja); command -v ninja >/dev/null || generator=()

step "build (native architecture)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv | tee "$out/gpu.txt"
t0=$(date +%s)
cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native "${kit_cmake_args[@]}" \
  >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"

step "tests (ctest)"
(cd build-gpu && ctest --output-on-failure -j 8 --timeout 300) >"$out/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log" | head -40
grep -h "Skipped\|SKIPPED" "$out/ctest.log" | head -5

step "compute-sanitizer on GPU tests"
for t in build-gpu/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  compute-sanitizer --tool memcheck --error-exitcode 9 "$t" --gtest_filter='*Cuda*:*CUDA*:*Gpu*:*GPU*' \
    >"$out/sanitizer_$name.log" 2>&1
  rc=$?
  echo "$name: memcheck rc=$rc $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/sanitizer_$name.log" | tr '\n' ' ' | cut -c1-150)"
  [ $rc -eq 0 ] || status=1
done
if [ "$mode" != quick ]; then
  for t in build-gpu/test_*; do
    name=$(basename "$t")
    compute-sanitizer --tool racecheck --error-exitcode 9 "$t" --gtest_filter='*Cuda*:*CUDA*:*Gpu*:*GPU*' \
      >"$out/racecheck_$name.log" 2>&1
    echo "$name: racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_$name.log" | head -1)"
  done
fi

step "bench"
for config in configs/bench/*.yaml; do
  cname=$(basename "$config" .yaml)
  for size in 640x480 1920x1080 3840x2160; do
    build-gpu/stylepipe bench --config "$config" --size "$size" --frames 300 --warmup 30 \
      --json "$out/bench_${cname}_${size}.json" >"$out/bench_${cname}_${size}.txt" 2>&1 || status=1
    grep -E "chain|^[a-z_]+ +[0-9]" "$out/bench_${cname}_${size}.txt" | sed "s/^/[$cname $size] /"
  done
done

step "end to end against ffmpeg"
scripts/e2e-compare.sh "$out" || status=1
exit $status
