#!/usr/bin/env bash
# CI's checks after the README's test command (.ci/run calls this): the CPU
# test suite under ASan + UBSan (build-asan), the threading tests under TSan
# (build-tsan), then each fuzz harness for FUZZ_SECONDS (scripts/fuzz.sh).
# GPU tests skip as in the plain build. Prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

step_start=$SECONDS
step_done() {
  echo "sanitize-and-fuzz: $1 took $((SECONDS - step_start)) s"
  step_start=$SECONDS
}

configure() {  # build_dir sanitizers [cmake args...]
  local dir=$1 sanitizers=$2
  shift 2
  # -O1 -g1: well under -O3's compile time, and reports with line numbers.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DSTYLEPIPE_SANITIZE="$sanitizers" "$@" >/dev/null
}

export UBSAN_OPTIONS=print_stacktrace=1
# Exported: the e2e tests run the instrumented stylepipe binary too.
export TSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/tsan.supp"

configure build-asan address,undefined
cmake --build build-asan -j "$jobs"
step_done "build-asan: build"
(cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 900)
step_done "build-asan: tests"

# The tests that run threads: the queue and worker pool, the reader/
# processor/writer transcoder (through the binary: TranscodeE2E, interrupts
# included), FFmpeg's decoder and encoder threads calling back into ours
# (MediaWriter*, in process), live pipes and capture, segment-parallel runs.
# Their chains use scale and xbr only, so the other stages (and their slow
# CUDA builds) are left out here, with the one test that needs pencil; the
# ASan build runs all of their tests.
configure build-tsan thread "-DSTYLEPIPE_EXCLUDE_STAGES=halftone;lowpoly;pencil"
cmake --build build-tsan -j "$jobs" --target test_core stylepipe
step_done "build-tsan: build"
threading_tests='^(BoundedQueue|ParallelFor|MediaWriter[A-Za-z]*|TranscodeE2E|LivePipe|LiveCapture|SegmentsE2E)\.'
(cd build-tsan &&
  ctest --output-on-failure -j "$jobs" --timeout 900 -R "$threading_tests" -E 'SegmentsE2E\.TemporalSeam')
step_done "build-tsan: tests"

JOBS=$jobs scripts/fuzz.sh "${FUZZ_SECONDS:-120}"
step_done "fuzz"
