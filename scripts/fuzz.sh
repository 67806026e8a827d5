#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang++, ASan + UBSan) into
# ${FUZZ_BUILD_DIR:-build-fuzz} and runs each for SECONDS (default 120),
# starting from its seed corpus and the committed regression inputs. A
# finding fails the script, once every harness has run, with its input in
# build-fuzz/findings/HARNESS/ (and in the log as base64, for CI): fix the
# bug, then commit the input to tests/fuzz/regressions/HARNESS/ (a CTest
# replays that folder). New inputs the fuzzers find collect in
# build-fuzz/corpus/HARNESS/, so local runs resume where they stopped.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]   (harnesses: config media pipe)
# FUZZ_FLAGS adds libFuzzer flags (e.g. -seed=1, -rss_limit_mb=0 -timeout=2).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
shift || true
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(config media pipe)
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
  -DSTYLEPIPE_SANITIZE=address,undefined -DSTYLEPIPE_FUZZ=ON ${CHECKS_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "${JOBS:-2}" --target "${harnesses[@]/#/fuzz_}"

# Longest input per harness: configs are short; media seeds are under 8 KB;
# the pipe must hold a whole input (64 KiB by default, raised up to 1 MiB).
declare -A max_len=([config]=4096 [media]=16384 [pipe]=16384)
# Seed folders besides tests/fuzz/corpus/HARNESS (as in tests/fuzz/CMakeLists.txt).
declare -A extra_seeds=([config]="configs tests/configs" [media]="" [pipe]="")

# One harness's run; its status is the harness's (0: no finding).
fuzz_one() {  # harness
  local harness=$1 work findings stamp status=0 seeds regressions
  work="$build_dir/corpus/$harness"
  findings="$build_dir/findings/$harness"
  mkdir -p "$work" "$findings"
  stamp="$build_dir/findings/.started-$harness"
  touch "$stamp"
  read -ra seeds <<<"${extra_seeds[$harness]}"
  regressions=()
  [ -d "tests/fuzz/regressions/$harness" ] && regressions=("tests/fuzz/regressions/$harness")
  echo "fuzz: $harness for ${seconds}s"
  # The first folder receives new inputs; the others are only read. An input
  # slower than -timeout is a finding (with its file); the outer timeout is
  # for libFuzzer itself, whose out-of-memory report walks the whole ASan
  # heap and can take longer than the run.
  timeout -k 10 $((seconds + 120)) \
    "$build_dir/tests/fuzz/fuzz_$harness" -max_total_time="$seconds" -max_len="${max_len[$harness]}" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$findings/" \
    ${FUZZ_FLAGS:-} "$work" "tests/fuzz/corpus/$harness" "${seeds[@]}" "${regressions[@]}" || status=$?
  ((status == 0)) && return 0
  if ((status == 124 || status == 137)); then
    echo "fuzz: $harness did not finish, likely stuck in its out-of-memory report; an input that runs away" \
      "is kept as a timeout with FUZZ_FLAGS='-rss_limit_mb=0 -timeout=2'" >&2
  fi
  # The input is also printed, so that a CI log alone is enough to replay it.
  while IFS= read -r input; do
    echo "fuzz: $harness: finding $input ($(stat -c %s "$input") bytes; base64: $(head -c 16384 "$input" | base64 -w0))" >&2
  done < <(find "$findings" -maxdepth 1 -type f -newer "$stamp")
  echo "fuzz: $harness FAILED (exit $status): reproduce with $build_dir/tests/fuzz/fuzz_$harness FILE; once fixed," \
    "commit the input to tests/fuzz/regressions/$harness/" >&2
  return "$status"
}

# The harnesses run side by side (each fuzzer is one process on one core):
# on CI's two cores three of them take SECONDS, not three times SECONDS.
mkdir -p "$build_dir/findings"
pids=()
for harness in "${harnesses[@]}"; do
  fuzz_one "$harness" >"$build_dir/findings/$harness.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!harnesses[@]}"; do
  wait "${pids[$i]}" || failed+=("${harnesses[$i]}")
  cat "$build_dir/findings/${harnesses[$i]}.log"
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]} (inputs in $build_dir/findings/)" >&2
  exit 1
fi
