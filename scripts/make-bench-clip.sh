#!/usr/bin/env bash
# A 1080p H.264 + AAC clip for throughput runs: a moving pattern plus film
# grain, so the encoders get real work. 10 s are made (the grain filter is
# single-threaded), then repeated by stream copy. Kept if it exists.
# Usage: scripts/make-bench-clip.sh OUT.mp4 SECONDS RATE
set -euo pipefail
clip=${1:?usage: scripts/make-bench-clip.sh OUT.mp4 SECONDS RATE}
seconds=${2:-60}
rate=${3:-60}
[ -e "$clip" ] && exit 0
# The GPU machine's FFmpeg has no grain filter: there, a part made elsewhere
# with the same command travels in .devkit (BENCH_PART).
part=${BENCH_PART:-.devkit/bench_part_1080p${rate}.mp4}
if [ ! -e "$part" ]; then
  part="${clip%.mp4}_part.mp4"
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=1920x1080:rate=$rate" \
    -f lavfi -i sine=frequency=440:sample_rate=48000 -t 10 -vf "noise=alls=5:allf=t" \
    -c:v libx264 -preset veryfast -crf 23 -g $((rate * 2)) -pix_fmt yuv420p -c:a aac "$part"
fi
# SECONDS may have a fraction (102.5: the 6,150 frames at 60 fps): the part is looped over its whole seconds.
whole=${seconds%.*}
[ "$whole" = "$seconds" ] || whole=$((whole + 1))
ffmpeg -hide_banner -loglevel error -y -stream_loop $(( (whole + 9) / 10 - 1 )) -i "$part" -t "$seconds" -c copy "$clip"
