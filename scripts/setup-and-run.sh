#!/usr/bin/env bash
# README command 1: install, build, and stylize a default input (colour pencil
# drawing of a 720p test pattern with a tone: the run took 21 s on 2 cores
# without a GPU, after the build).
# Usage: scripts/setup-and-run.sh [input] [output] [config]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The CLI alone: 131 of the 241 build steps, and none of the tests (the other command builds those).
TARGETS=stylepipe scripts/build.sh
mkdir -p out
input=${1:-out/demo_input.mp4}
output=${2:-out/demo_output.mp4}
config=${3:-configs/pencil.yaml}
if [ ! -e "$input" ]; then
  # Five seconds of moving test pattern with a tone: the default input.
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1280x720:rate=30 \
    -f lavfi -i sine=frequency=440:sample_rate=48000 -t 5 -c:v libx264 -pix_fmt yuv420p -c:a aac "$input"
fi
build/stylepipe run "$config" -i "$input" -o "$output" -y --stats-json out/demo_stats.json
echo "wrote $output (stats in out/demo_stats.json)"
