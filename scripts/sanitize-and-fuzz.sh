#!/usr/bin/env bash
# The checks after the README's test command (README "Checks"): the CPU test
# suite under ASan + UBSan (build-asan), the threading tests under TSan
# (build-tsan), then each fuzz harness for FUZZ_SECONDS (scripts/fuzz.sh).
# GPU tests skip as in the plain build.
# Usage: scripts/sanitize-and-fuzz.sh [STEP...]
#   steps, in this order by default: asan-build asan-test tsan-build tsan-test fuzz
# .ci/run calls the steps one by one to time them.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

# CHECKS_CMAKE_ARGS adds configure arguments to both sanitizer builds (a
# configuration without CUDA, say, which then builds no nvcc code at all).
# clang++ where installed (the fuzz harnesses need it anyway): with ASan +
# UBSan at -O1 it compiles a file in ~0.6 of gcc's time (gcc's UBSan
# instrumentation doubles its compile time; measured on tests/segments_e2e_test.cpp).
sanitizer_cxx=${SANITIZER_CXX:-$(command -v clang++ || command -v c++)}

configure() {  # build_dir sanitizers [cmake args...]
  local dir=$1 sanitizers=$2
  shift 2
  # -O1 -g1: well under -O3's compile time, and reports with line numbers.
  # shellcheck disable=SC2086
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
    -DCMAKE_CXX_COMPILER="$sanitizer_cxx" \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DSTYLEPIPE_SANITIZE="$sanitizers" "$@" ${CHECKS_CMAKE_ARGS:-} >/dev/null
}

# Reports go to files, one per process, because many come from the stylepipe
# binary that e2e tests run: a test that expects that binary to fail, or does
# not look at its exit status, would otherwise let a report pass unseen.
reports_dir() { echo "$PWD/$1/sanitizer-reports"; }

run_ctest() {  # build_dir [ctest args...]
  local dir=$1 reports status=0
  shift
  reports=$(reports_dir "$dir")
  rm -rf "$reports" && mkdir -p "$reports"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 900 "$@") || status=$?
  local found=("$reports"/*)
  if [ -e "${found[0]}" ]; then
    for f in "${found[@]}"; do
      echo "---- $f"
      head -n 60 "$f"
    done
    echo "sanitize-and-fuzz: ${#found[@]} sanitizer report(s) in $dir (above; all of them in $reports)" >&2
    return 1
  fi
  return "$status"
}

asan_env() {
  local r
  r=$(reports_dir build-asan)
  export ASAN_OPTIONS="log_path=$r/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="print_stacktrace=1:log_path=$r/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
}

tsan_env() {
  export TSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/tsan.supp:log_path=$(reports_dir build-tsan)/tsan${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
}

step() {
  case $1 in
    asan-build)
      configure build-asan address,undefined
      cmake --build build-asan -j "$jobs" ;;
    cpu-only-check)  # the ASan build is the CPU-only configuration when CI builds it under scripts/without-cuda.sh
      scripts/check-cpu-only-build.sh build-asan ;;
    asan-test)
      # deb_package included: it tests the packaging (cpack, dpkg-shlibdeps,
      # the man page, install, run, purge), which a sanitized binary goes
      # through as a release one does, and the installed binary runs under
      # ASan too.
      asan_env
      run_ctest build-asan ;;
    tsan-build)
      configure build-tsan thread "-DSTYLEPIPE_EXCLUDE_STAGES=halftone;lowpoly;pencil"
      cmake --build build-tsan -j "$jobs" --target test_core stylepipe ;;
    tsan-test)
      tsan_env
      # The build's test_core holds only the threading tests (CMakeLists.txt,
      # THREADING_TEST_FILES); their chains use scale and xbr, so the other
      # stages are left out, and the tests that need one skip.
      run_ctest build-tsan -L threading ;;
    fuzz)
      JOBS=$jobs scripts/fuzz.sh "${FUZZ_SECONDS:-120}" ;;
    *)
      echo "sanitize-and-fuzz: unknown step '$1' (asan-build, cpu-only-check, asan-test, tsan-build, tsan-test, fuzz)" >&2
      return 64 ;;
  esac
}

steps=("$@")
((${#steps[@]})) || steps=(asan-build asan-test tsan-build tsan-test fuzz)
for s in "${steps[@]}"; do
  start=$SECONDS
  step "$s"
  echo "sanitize-and-fuzz: $s took $((SECONDS - start)) s"
done
