#!/usr/bin/env bash
# README command 2: install, build, and run every test. GPU tests skip with a
# message when no device is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
start=$SECONDS
scripts/build.sh
echo "setup-and-test: build took $((SECONDS - start)) s"
cd "${BUILD_DIR:-build}"
start=$SECONDS
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600
echo "setup-and-test: tests took $((SECONDS - start)) s"
