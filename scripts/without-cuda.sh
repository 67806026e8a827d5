#!/usr/bin/env bash
# Runs COMMAND where the CUDA toolkit cannot be found, as on a machine without
# it: nvcc is taken off PATH and CUDA_PATH/CUDA_HOME/CUDACXX are unset; as root
# (where unshare works) /usr/local/cuda* is also hidden behind empty tmpfs
# mounts in a private mount namespace, so neither CMake nor the compiler can
# find a CUDA header or library. STYLEPIPE_CUDA_HIDDEN=1 tells COMMAND so.
#   scripts/without-cuda.sh COMMAND [ARGS...]
set -euo pipefail
(($#)) || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 64; }

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
    exec "$0" "$@"' "$(realpath "$0")" "$@"
fi

PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -i cuda | paste -sd: -)
export PATH
unset CUDA_PATH CUDA_HOME CUDACXX
if [ -n "${STYLEPIPE_CUDA_HIDDEN:-}" ]; then
  # Wrappers elsewhere on PATH (/usr/local/bin/nvcc) may remain, but must not run.
  if nvcc --version >/dev/null 2>&1; then
    echo "without-cuda: nvcc still runs with the toolkit hidden ($(command -v nvcc))" >&2
    exit 1
  fi
else
  echo "without-cuda: note: the CUDA toolkit is not hidden (not root, or no unshare); only PATH keeps it out" >&2
fi
exec "$@"
