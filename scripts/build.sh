#!/usr/bin/env bash
# Configures and builds into ${BUILD_DIR:-build}. CUDA architectures come from
# CUDA_ARCHS (default 90; `native` on a GPU machine). TARGETS (space-separated)
# builds only those, e.g. TARGETS=stylepipe for the CLI alone.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" ${CMAKE_EXTRA_ARGS:-} >/dev/null
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" ${TARGETS:+--target $TARGETS}
