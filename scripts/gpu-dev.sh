#!/usr/bin/env bash
# Quick GPU iteration on the lent machine: build only the named targets for
# sm_90 into build-gpu-dev (kept between calls while the machine is warm) and
# run each test target with an optional gtest filter.
# Usage: scripts/gpu-dev.sh "test_lowpoly stylepipe" ['*Cuda*'] [sanitize]
set -uo pipefail
# compute-sanitizer hangs on CUDA's lazy module loading once several threads launch kernels
# (session 36: a halftone --jobs 2 run sat idle after 0.4 s; 3.8 s and 0 errors with eager loading): its runs load
# every module up front, the others as users' runs do.
cd "$(dirname "$0")/.."
targets=${1:?usage: scripts/gpu-dev.sh "TARGETS" [GTEST_FILTER] [sanitize]}
filter=${2:-*}
. scripts/devkit-env.sh
generator=(-G Ninja); command -v ninja >/dev/null || generator=()
# EXCLUDE_STAGES="a;b" leaves other people's unfinished stage folders out.
cmake -S . -B build-gpu-dev "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${kit_cmake_args[@]}" \
    -DSTYLEPIPE_EXCLUDE_STAGES="${EXCLUDE_STAGES:-}" \
    >/tmp/gpu-dev-cmake.log 2>&1 || { tail -30 /tmp/gpu-dev-cmake.log; exit 1; }
t0=$(date +%s)
# shellcheck disable=SC2086
cmake --build build-gpu-dev -j "$(nproc)" --target $targets >/tmp/gpu-dev-build.log 2>&1 ||
  { grep -E "error|Error" /tmp/gpu-dev-build.log | head -40; exit 1; }
echo "built $targets in $(( $(date +%s) - t0 )) s"
status=0
for t in $targets; do
  case $t in test_*) ;; *) continue ;; esac
  build-gpu-dev/$t --gtest_filter="$filter" 2>&1 | grep -vE "^\[ +(RUN|OK) " | tail -60 || status=1
  if [ "${3:-}" = sanitize ]; then
    CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu-dev/$t --gtest_filter="$filter" >/tmp/san.log 2>&1
    echo "$t memcheck rc=$? $(grep -E 'ERROR SUMMARY' /tmp/san.log)"
  fi
done
exit $status
