#!/usr/bin/env bash
# Builds the CPU-only configuration (-DSTYLEPIPE_CUDA=OFF) into
# ${BUILD_DIR:-build-cpu} the way a machine without the CUDA toolkit would
# (scripts/without-cuda.sh), proves it used no part of the toolkit
# (scripts/check-cpu-only-build.sh), and runs its tests (SKIP_TESTS=1: build only).
# Extra arguments go to ctest (e.g. -R Transcode, -LE slurm).
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
[ -n "${STYLEPIPE_CUDA_HIDDEN:-}" ] || exec scripts/without-cuda.sh "$self" "$@"
build_dir=${BUILD_DIR:-build-cpu}

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTYLEPIPE_CUDA=OFF ${CMAKE_EXTRA_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}"
scripts/check-cpu-only-build.sh "$build_dir"

[ "${SKIP_TESTS:-0}" = 1 ] && exit 0
cd "$build_dir"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600 "$@"
