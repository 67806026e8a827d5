#!/usr/bin/env bash
# Proves that BUILD_DIR (a configuration with -DSTYLEPIPE_CUDA=OFF, built with
# scripts/without-cuda.sh) used no part of the CUDA toolkit: no compiled file
# included anything under a CUDA directory (ninja's dependency log), the binary
# links no CUDA library (ldd), and `stylepipe --version` names the CPU only.
#   scripts/check-cpu-only-build.sh BUILD_DIR
set -euo pipefail
(($# == 1)) || { echo "usage: $0 BUILD_DIR" >&2; exit 64; }
build_dir=$1

# The toolkit's headers, wherever it is installed (/usr/local/cuda*, or
# /usr/include from Debian's nvidia-cuda-toolkit).
cuda_headers=$(ninja -C "$build_dir" -t deps \
  | grep -E '^ +(/usr/local/cuda|.*/(cuda_runtime|cuda_runtime_api|vector_types|cufft|curand)\.h$|/usr/include/cuda\.h$)' \
  | sort -u || true)
if [ -n "$cuda_headers" ]; then
  echo "check-cpu-only-build: $build_dir included CUDA headers:" >&2
  echo "$cuda_headers" | head -5 >&2
  exit 1
fi
if ldd "$build_dir/stylepipe" | grep -E -i 'libcuda|libcudart|libcufft|libcurand|libnvidia'; then
  echo "check-cpu-only-build: $build_dir/stylepipe links a CUDA library (above)" >&2
  exit 1
fi
"$build_dir/stylepipe" --version | grep -qx 'backends: cpu' \
  || { echo "check-cpu-only-build: $build_dir/stylepipe --version does not say 'backends: cpu'" >&2; exit 1; }
echo "check-cpu-only-build: $build_dir: no CUDA header included, no CUDA library linked"
