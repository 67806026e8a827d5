#!/usr/bin/env bash
# On a GPU machine: build for the local architecture, run the tests (GPU tests
# included), run compute-sanitizer on the GPU tests, run bench for each config,
# compare end-to-end transcodes with ffmpeg, and transcode a 1080p clip through
# each stage.
#   full:  every test (ctest), memcheck + racecheck, bench at 640x480, 1920x1080, 3840x2160
#   quick: the GPU tests only, memcheck, bench at 1920x1080 (fits one 10-minute device call)
# The sanitizer runs last (it is the slowest). BENCH_CONFIGS, QUICK_SIZES and SANITIZE_TESTS
# (space-separated) narrow the bench configs, the quick sizes and the sanitized tests;
# SKIP_E2E=1 leaves out the end-to-end, NVDEC and per-stage transcodes. The Python
# module's GPU tests (PyTorch, CuPy), their memcheck and scripts/bench-python.py run
# where the machine's python3 has pybind11.
# Usage: scripts/gpu-check.sh OUTDIR [quick]
set -uo pipefail
# compute-sanitizer hangs on CUDA's lazy module loading once several threads launch kernels
# (session 36: a halftone --jobs 2 run sat idle after 0.4 s; 3.8 s and 0 errors with eager loading): its runs load
# every module up front, the others as users' runs do.
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/gpu-check.sh OUTDIR}")
mode=${2:-full}
mkdir -p "$out"
status=0
step() { echo; echo "=== $* ($(date +%T)) ==="; }
gpu_filter='*Cuda*:*CUDA*:*Gpu*:*GPU*:HwDecode*:HwEncode*'

. scripts/devkit-env.sh
generator=(-G Ninja); command -v ninja >/dev/null || generator=()

step "build (native architecture)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv | tee "$out/gpu.txt"
t0=$(date +%s)
cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native "${kit_cmake_args[@]}" \
  >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"

if [ "$mode" = quick ]; then
  step "GPU tests"
  for t in build-gpu/test_*; do
    [[ -x $t && $t != *.cmake ]] || continue
    "$t" --gtest_filter="$gpu_filter" >"$out/gpu_tests_$(basename "$t").log" 2>&1 || status=1
    echo "$(basename "$t"): $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu_tests_$(basename "$t").log" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \] [A-Za-z]' "$out/gpu_tests_$(basename "$t").log" | sort -u | head -10
  done
else
  step "tests (ctest)"
  (cd build-gpu && ctest --output-on-failure -j 8 --timeout 300) >"$out/ctest.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log" | head -40
  grep -h "Skipped\|SKIPPED" "$out/ctest.log" | head -5
fi

step "bench"
sizes=(640x480 1920x1080 3840x2160)
[ "$mode" = quick ] && read -r -a sizes <<<"${QUICK_SIZES:-1920x1080}"
for config in ${BENCH_CONFIGS:-configs/bench/*.yaml}; do
  cname=$(basename "$config" .yaml)
  for size in "${sizes[@]}"; do
    build-gpu/stylepipe bench --config "$config" --size "$size" --frames 300 --warmup 30 \
      --json "$out/bench_${cname}_${size}.json" >"$out/bench_${cname}_${size}.txt" 2>&1 || status=1
    grep -E "chain|^[a-z_]+ +[0-9]" "$out/bench_${cname}_${size}.txt" | sed "s/^/[$cname $size] /"
  done
done

step "Python module: GPU tests, memcheck, bench"
if [ -d build-gpu/python/stylepipe ]; then
  export PYTHONPATH=$PWD/build-gpu/python STYLEPIPE_BINARY=$PWD/build-gpu/stylepipe
  (cd python/tests && python3 -m unittest -v test_gpu test_chain test_video) >"$out/python_tests.log" 2>&1 || status=1
  grep -E "^(Ran|OK|FAILED)|ERROR:|FAIL:|one thread" "$out/python_tests.log"
  (cd python/tests && CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m unittest test_gpu) \
    >"$out/sanitizer_python.log" 2>&1
  echo "python test_gpu: memcheck rc=$? $(grep -E 'ERROR SUMMARY|^OK|^FAILED' "$out/sanitizer_python.log" | tr '\n' ' ')"
  python3 scripts/bench-python.py build-gpu/stylepipe >"$out/python_bench.log" 2>&1 || status=1
  tail -n 6 "$out/python_bench.log"
  unset PYTHONPATH STYLEPIPE_BINARY
else
  echo "no Python module in this build: $(grep -m1 'Python module' "$out/cmake.log")"
fi

if [ -n "${SKIP_E2E:-}" ]; then
  step "SKIP_E2E: no end-to-end, NVDEC or per-stage transcodes"
else

step "end to end against ffmpeg (conversion-only chain)"
export STYLEPIPE=build-gpu/stylepipe
RUNS=${RUNS:-5} scripts/e2e-compare.sh "$out" || status=1
SP_FLAGS="" RUNS=${RUNS:-5} scripts/e2e-compare.sh "$out" || status=1

step "NVDEC"
scripts/nvdec-check.sh "$out" || status=1

step "each stage end to end (20 s 1080p30 clip, libx264 ultrafast, default codec flags)"
clip="$out/e2e_in_20s.mp4"
for config in configs/pencil.yaml configs/lowpoly.yaml configs/bench/halftone.yaml; do
  name=$(basename "$config" .yaml)
  build-gpu/stylepipe run "$config" -i "$clip" -o "$out/stage_$name.mp4" -y --preset ultrafast --progress none \
    --stats-json "$out/stage_$name.json" >"$out/stage_$name.log" 2>&1 || status=1
  python3 - "$out/stage_$name.json" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
stages = ", ".join(f"{x['name']} p50 {x['ms']['p50']:.3f} ms" for x in s["stages"])
print(f"{sys.argv[2]}: {s['frames']['out']} frames in {s['wall_seconds']:.2f} s = {s['frames']['out'] / s['wall_seconds']:.0f} fps "
      f"({stages}; decoder {s['decoder']['name']}, encoder {s['encoder']['name'].split(' ->')[0]})")
PY
done
fi  # SKIP_E2E

step "compute-sanitizer on GPU tests"
for t in ${SANITIZE_TESTS:-build-gpu/test_*}; do
  [[ -x $t && $t != *.cmake ]] || continue
  name=$(basename "$t")
  CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 "$t" --gtest_filter="$gpu_filter" >"$out/sanitizer_$name.log" 2>&1
  rc=$?
  echo "$name: memcheck rc=$rc $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/sanitizer_$name.log" | tr '\n' ' ' | cut -c1-150)"
  [ $rc -eq 0 ] || status=1
  if [ "$mode" != quick ]; then
    CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool racecheck --error-exitcode 9 "$t" --gtest_filter="$gpu_filter" >"$out/racecheck_$name.log" 2>&1
    echo "$name: racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_$name.log" | head -1)"
  fi
done

exit $status
