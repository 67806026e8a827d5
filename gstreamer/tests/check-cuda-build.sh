#!/usr/bin/env bash
# The plugin's CUDA sources (CUDA memory, staging, the pinned allocator)
# compiled against this machine's GStreamer CUDA library and the CUDA
# toolkit's headers. CI runs it in its Debian 13 root, whose GStreamer (1.26)
# takes the GST_CHECK_VERSION(1, 24, 0) branches (GstCudaStream) that the
# Debian 12 and GPU-machine builds (1.22) never compile; the rest of that
# root's build is CPU-only. Compiles, no link: linking needs the whole CUDA build.
# Usage: gstreamer/tests/check-cuda-build.sh   (exit 77: no CUDA headers or no gstreamer-cuda-1.0)
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -f "$cuda/include/cuda_runtime.h" ] || { echo "check-cuda-build: SKIP: no CUDA headers in $cuda/include"; exit 77; }
pkg-config --exists gstreamer-cuda-1.0 gstreamer-video-1.0 ||
  { echo "check-cuda-build: SKIP: no gstreamer-cuda-1.0 (libgstreamer-plugins-bad1.0-dev)"; exit 77; }
cxx=${CXX:-g++}
echo "check-cuda-build: GStreamer $(pkg-config --modversion gstreamer-cuda-1.0)," \
  "CUDA $(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda/include/cuda.h"), $($cxx --version | head -1)"
# Warnings are errors in our files; GStreamer's and CUDA's headers are system headers.
read -r -a gst_flags <<<"$(pkg-config --cflags gstreamer-cuda-1.0 gstreamer-video-1.0 | sed 's/-I/-isystem /g')"
for source in gstreamer/cuda_memory_gstcuda.cpp gstreamer/staging_cuda.cpp gstreamer/pinned_allocator_cuda.cpp; do
  "$cxx" -std=c++20 -O1 -Wall -Wextra -Werror -DGST_USE_UNSTABLE_API -DSTYLEPIPE_HAS_CUDA=1 -I. -Iinclude \
    -isystem "$cuda/include" "${gst_flags[@]}" -c "$source" -o /dev/null
  echo "check-cuda-build: ok: $source"
done
