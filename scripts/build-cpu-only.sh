#!/usr/bin/env bash
# Builds the CPU-only configuration (-DSTYLEPIPE_CUDA=OFF) into
# ${BUILD_DIR:-build-cpu} the way a machine without the CUDA toolkit would, proves
# it used no part of the toolkit, and runs its tests (SKIP_TESTS=1: build only).
#   - nvcc is taken off PATH; as root (where unshare works) /usr/local/cuda* is
#     also hidden behind empty tmpfs mounts in a private mount namespace, so
#     neither CMake nor the compiler can find a CUDA header or library;
#   - no compiled file may have included anything under a CUDA directory
#     (ninja's dependency log), and the binary links no CUDA library (ldd).
# Extra arguments go to ctest (e.g. -R Transcode, -LE slurm).
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
build_dir=${BUILD_DIR:-build-cpu}

# The toolkit's real folders (/usr/local/cuda itself is a link to one).
cuda_dirs() { for d in /usr/local/cuda*; do [ -d "$d" ] && [ ! -L "$d" ] && echo "$d"; done; }

if [ -z "${STYLEPIPE_CUDA_HIDDEN:-}" ] && [ -n "$(cuda_dirs)" ] && [ "$(id -u)" -eq 0 ] \
   && unshare -m true 2>/dev/null; then
  export STYLEPIPE_CUDA_HIDDEN=1
  export -f cuda_dirs
  exec unshare -m --propagation private bash -c '
    for d in $(cuda_dirs); do
      mount -t tmpfs -o ro,size=1k stylepipe-no-cuda "$d"
    done
    exec "$0" "$@"' "$self" "$@"
fi

PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -i cuda | paste -sd: -)
export PATH
unset CUDA_PATH CUDA_HOME CUDACXX
if [ -n "${STYLEPIPE_CUDA_HIDDEN:-}" ]; then
  # Wrappers elsewhere on PATH (/usr/local/bin/nvcc) may remain, but must not run.
  if nvcc --version >/dev/null 2>&1; then
    echo "build-cpu-only: nvcc still runs with the toolkit hidden ($(command -v nvcc))" >&2
    exit 1
  fi
else
  echo "build-cpu-only: note: the CUDA toolkit is not hidden (not root, or no unshare); only STYLEPIPE_CUDA=OFF keeps it out" >&2
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTYLEPIPE_CUDA=OFF ${CMAKE_EXTRA_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}"

# The toolkit's headers, wherever it is installed (/usr/local/cuda*, or
# /usr/include from Debian's nvidia-cuda-toolkit).
cuda_headers=$(ninja -C "$build_dir" -t deps \
  | grep -E '^ +(/usr/local/cuda|.*/(cuda_runtime|cuda_runtime_api|vector_types|cufft|curand)\.h$|/usr/include/cuda\.h$)' \
  | sort -u || true)
if [ -n "$cuda_headers" ]; then
  echo "build-cpu-only: the CPU-only build included CUDA headers:" >&2
  echo "$cuda_headers" | head -5 >&2
  exit 1
fi
if ldd "$build_dir/stylepipe" | grep -E -i 'libcuda|libcudart|libcufft|libcurand|libnvidia'; then
  echo "build-cpu-only: $build_dir/stylepipe links a CUDA library (above)" >&2
  exit 1
fi
"$build_dir/stylepipe" --version | grep -qx 'backends: cpu' \
  || { echo "build-cpu-only: stylepipe --version does not say 'backends: cpu'" >&2; exit 1; }
echo "build-cpu-only: no CUDA header included, no CUDA library linked"

[ "${SKIP_TESTS:-0}" = 1 ] && exit 0
cd "$build_dir"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600 "$@"
