#!/usr/bin/env bash
# One device call on a machine with several GPUs (issue 29): build for sm_90,
# the multi-GPU and segment tests, compute-sanitizer on a run over every GPU,
# start-up of a 10-frame clip with one and with every GPU visible, and
# throughput on one GPU against every GPU (pencil against the host's codec
# ceiling, N ffmpeg processes; the GPU-bound halftone chain).
# CLIP_SECONDS (default 30) sizes the throughput clip (102.5 at 60 fps: the
# 6,150 frames of the issue's longer clip); SKIP_TESTS=1 leaves out
# the tests and memcheck, SKIP_STARTUP=1 the start-up; SKIP_BENCH=1 stops
# after the start-up; BATCH_CLIPS (default 200)
# clips of 2 s as one batch against one clip of their length, every GPU,
# with --jobs BATCH_JOBS (default auto) for both (SKIP_BATCH=1 leaves it out); SKIP_THROUGHPUT=1 stops before the
# throughput runs; PYTHON_TESTS=1 also builds the
# Python module and runs its GPU tests (PyTorch, CuPy) and test_chain.
# The --jobs values: PENCIL_1GPU_JOBS (default 4) and PENCIL_ALL_JOBS
# (default 4 a GPU) for pencil on GPU 0 and on every GPU, HALFTONE_ALL_JOBS
# (default 2 a GPU) for halftone on every GPU, HALFTONE_1GPU_JOBS (default 2)
# on GPU 0; HALFTONE_SKIP_SINGLE= (empty) adds a single run on GPU 0.
# Usage: scripts/gpu-multi-check.sh OUTDIR
set -uo pipefail
# compute-sanitizer hangs on CUDA's lazy module loading once several threads launch kernels
# (session 36: a halftone --jobs 2 run sat idle after 0.4 s; 3.8 s and 0 errors with eager loading): its runs load
# every module up front, the others as users' runs do.
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/gpu-multi-check.sh OUTDIR}")
mkdir -p "$out"
status=0
extra=()
BATCH_CLIPS=${BATCH_CLIPS:-200}
step() { echo; echo "=== $* ($(date +%T)) ==="; }
. scripts/devkit-env.sh
generator=(-G Ninja); command -v ninja >/dev/null || generator=()
gpus=$(nvidia-smi -L | wc -l)
all=$(seq -s, 0 $((gpus - 1)))

step "build ($gpus GPUs)"
nvidia-smi --query-gpu=index,name,pci.bus_id,persistence_mode --format=csv,noheader | tee "$out/gpus.txt"
t0=$(date +%s)
cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${kit_cmake_args[@]}" \
  >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
targets=(stylepipe test_core); [ -n "${PYTHON_TESTS:-}" ] && targets+=(_stylepipe)
cmake --build build-gpu -j "$(nproc)" --target "${targets[@]}" >"$out/build.log" 2>&1 ||
  { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "built in $(($(date +%s) - t0)) s"
bin=$PWD/build-gpu/stylepipe

if [ -z "${SKIP_TESTS:-}" ]; then
step "tests"
build-gpu/test_core --gtest_filter='SegmentsGpu.*:TranscodeE2E.Cuda*:FrameGraphsCuda.*:PublicChainGpu.*:ConvertCuda.*:BatchE2E.*:PencilStage.ForgetHistory*:KeptDecoder.*' \
  >"$out/tests.log" 2>&1 || status=1
grep -E '^\[  (PASSED|FAILED|  SKIPPED) ' "$out/tests.log"
grep -E '^\[  FAILED  \] [A-Za-z]' "$out/tests.log" | sort -u | head

if [ -n "${PYTHON_TESTS:-}" ]; then
  step "Python: GPU tests and test_chain"
  (cd python/tests && PYTHONPATH=$PWD/../../build-gpu/python STYLEPIPE_BINARY=$bin python3 -m unittest test_gpu test_chain) \
    >"$out/python_tests.log" 2>&1 || status=1
  grep -E "^(Ran|OK|FAILED)|ERROR:|FAIL:" "$out/python_tests.log"
fi

step "memcheck: worker threads on every GPU"
ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=640x360:rate=30 -f lavfi -i sine -t 3 -c:v libx264 -g 15 \
  -pix_fmt yuv420p -c:a aac "$out/small.mp4"
CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 "$bin" run configs/pencil.yaml -i "$out/small.mp4" \
  -o "$out/small_out.mkv" -y --codec ffv1 --jobs $((2 * gpus)) --devices all --segments $((2 * gpus)) --progress none \
  >"$out/memcheck.log" 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
# halftone's colour sets on side streams; its warm while-loop graphs stop
# memcheck itself (stages/halftone/README.md), so they run launch by launch.
SP_HALFTONE_GRAPHS=0 CUDA_MODULE_LOADING=EAGER timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin" run \
  configs/bench/halftone_gpu_bound.yaml -i "$out/small.mp4" -o "$out/small_halftone.mkv" -y --codec ffv1 --frames 12 \
  --progress none >"$out/memcheck_halftone.log" 2>&1
echo "memcheck (halftone cmy, graphs off) rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck_halftone.log" | tail -1)"
# A batch: kept stage chains (pencil's device-side reset) and kept NVDEC
# decoders, on every GPU; one clip of another size.
mkdir -p "$out/batch_in" "$out/batch_out"
for k in 1 2 3 4 5; do
  ffmpeg -hide_banner -v error -y -f lavfi -i "testsrc2=size=320x240:rate=30" -ss "$k" -t 1 -c:v libx264 \
    -pix_fmt yuv420p "$out/batch_in/clip$k.mp4"
done
ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=352x288:rate=30 -t 1 -c:v libx264 -pix_fmt yuv420p "$out/batch_in/clip6.mp4"
CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 "$bin" run configs/pencil.yaml -i "$out/batch_in/clip*.mp4" \
  -o "$out/batch_out/{stem}.mkv" -y --codec ffv1 --jobs "$gpus" --devices all --hwdec nvdec --progress none \
  --stats-json "$out/batch_memcheck.json" >"$out/memcheck_batch.log" 2>&1
echo "memcheck (batch) rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck_batch.log" | tail -1);" \
  "$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["inputs"]; print(sum(bool(c["stats"]["decoder"].get("kept")) for c in i), "of", len(i), "clips took a kept decoder")' "$out/batch_memcheck.json" 2>&1)"
rm -rf "$out/batch_in" "$out/batch_out"
fi

if [ -z "${SKIP_STARTUP:-}" ]; then
  step "start-up of a 10-frame 1080p clip: each way of running it, the driver's floor, ffmpeg"
  STYLEPIPE=$bin scripts/startup-bench.sh "$out/startup" | tee "$out/startup.txt" || status=1
fi
[ -n "${SKIP_BENCH:-}" ] && exit $status

if [ -z "${SKIP_BATCH:-}" ]; then
  step "a folder of clips: $BATCH_CLIPS clips of 2 s in one command against one clip of their length, every GPU"
  CLIPS=$BATCH_CLIPS CLIP_SECONDS=2 JOBS="${BATCH_JOBS:-auto}" DEVICES=all STYLEPIPE=$bin scripts/batch-bench.sh "$out/batch" |
    tee -a "$out/batch.txt" || status=1
  python3 - "$out/batch/batch.json" <<'PY' | tee -a "$out/batch.txt"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["totals"]
print("batch stats: %d inputs, %d done, %d failed, %.0f fps" % (t["inputs"], t["done"], t["failed"], t["fps"]))
PY
  rm -rf "$out/batch"
fi

[ -n "${SKIP_THROUGHPUT:-}" ] && exit $status
step "pencil -> libx264 ultrafast: ceiling, one GPU, every GPU"
export STYLEPIPE=$bin CLIP_SECONDS=${CLIP_SECONDS:-30}
PEER_SESSIONS="$((4 * gpus))" SKIP_SINGLE=1 JOBS="${PENCIL_1GPU_JOBS:-4}" DEVICES=0 TAG=pencil_1gpu \
  scripts/segments-bench.sh "$out/bench" | grep -v "^    device" || status=1
NO_PEER=1 SKIP_SINGLE=1 JOBS="${PENCIL_ALL_JOBS:-$((4 * gpus))}" DEVICES=all TAG=pencil_all \
  scripts/segments-bench.sh "$out/bench" || status=1

step "halftone (GPU-bound) -> libx264 ultrafast: one GPU, every GPU"
halftone_1gpu_jobs=${HALFTONE_1GPU_JOBS:-2}
CONFIG=configs/bench/halftone_gpu_bound.yaml NO_PEER=1 SKIP_SINGLE=${HALFTONE_SKIP_SINGLE-1} JOBS="$halftone_1gpu_jobs" \
  DEVICES=0 TAG=halftone_1gpu KEEP_OUTPUT=1 scripts/segments-bench.sh "$out/bench" || status=1
# The limit x264 puts on that chain: its output (dense dots, costly to
# encode) through NVDEC and libx264 ultrafast, 4 ffmpeg processes a GPU side by side.
halftone_out=$out/bench/halftone_1gpu_jobs${halftone_1gpu_jobs%% *}.mp4
if [ -f "$halftone_out" ]; then
  n=$((4 * gpus)) halftone_frames=$(ffprobe -v error -select_streams v:0 -count_packets \
    -show_entries stream=nb_read_packets -of csv=p=0 "$halftone_out")
  s=$(date +%s.%N)
  for i in $(seq 1 "$n"); do
    ffmpeg -hide_banner -v error -hwaccel cuda -hwaccel_device $((i % gpus)) -i "$halftone_out" -c:v libx264 \
      -preset ultrafast -f null - &
  done
  wait
  e=$(date +%s.%N)
  awk -v a="$s" -v b="$e" -v f="$halftone_frames" -v n="$n" \
    'BEGIN{printf "x264 ceiling on the halftone output (%dx ffmpeg -hwaccel cuda + libx264 ultrafast): %.0f fps\n", n, n*f/(b-a)}' |
    tee -a "$out/bench/segments.txt"
  rm -f "$halftone_out"
fi
CONFIG=configs/bench/halftone_gpu_bound.yaml NO_PEER=1 SKIP_SINGLE=1 JOBS="${HALFTONE_ALL_JOBS:-$((2 * gpus))}" DEVICES=all \
  TAG=halftone_all scripts/segments-bench.sh "$out/bench" || status=1

step "a worker's start-up steps (median over its segments, seconds after the worker's run started)"
scripts/worker-steps.py "$out"/bench/*_jobs*.json | tee -a "$out/segments.txt"
cp "$out/bench/segments.txt" "$out/segments.txt" 2>/dev/null
rm -rf "$out/bench" "$out"/*.mp4 "$out"/*.mkv "$out"/cmake.log "$out"/build.log
exit $status
