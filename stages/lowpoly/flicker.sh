#!/usr/bin/env bash
# Flicker of a clip: the mean absolute difference between consecutive frames,
# in 8-bit luma levels (FFmpeg's tblend difference + signalstats YAVG), averaged.
# Usage: stages/lowpoly/flicker.sh CLIP
set -euo pipefail
ffmpeg -v error -i "$1" -vf "format=yuv444p,tblend=all_mode=difference,signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-" \
  -f null - | awk -F= '/YAVG/ { s += $2; n++ } END { if (n > 1) printf "%.3f\n", s / n; else print "n/a" }'
