#!/usr/bin/env bash
# A live 60 fps 256x240 source through xbr 4x (an emulator's screen) on the
# GPU machine, with the kit's GStreamer and the plugin in build-gpu/: the time
# each frame spends in the element (its own stats and per-frame log: the kit
# has no latency tracer) and the frames QoS dropped. Two ways in: system
# memory staged by the element (what ximagesrc gives), and CUDA memory from
# cudaupload. Fails where system memory's p99 is over 2 ms or a frame is lost.
# Usage: gstreamer/tests/live_latency.sh OUTDIR [FRAMES]   (default 1800: 30 s)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=$(realpath -m "${1:?usage: gstreamer/tests/live_latency.sh OUTDIR [FRAMES]}")
frames=${2:-1800}
mkdir -p "$out"
# shellcheck source=gstreamer/tests/kit-gst.sh
. gstreamer/tests/kit-gst.sh  # gst (the kit's tools with the build's plugin), stats_of, field
status=0

# Per-frame times from the element's log: percentiles of all frames and of
# those after the first 10 (set-up), and the slowest frames' places.
summary() {  # log label
  grep -o "latency: [0-9]* us" "$1" | awk '{ print NR, $2 }' >"$1.frames"
  # (mawk, the GPU machine's awk, takes no ?: inside an index)
  sort -k2 -n "$1.frames" | awk -v label="$2" '{ v[NR] = $2 } END {
    if (NR == 0) { print label ": no per-frame records"; exit 1 }
    p99 = int(NR * 0.99) + 1; if (p99 > NR) p99 = NR
    printf "%s: %d frames: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n", label, NR, v[int(NR * 0.5) + 1] / 1e3,
      v[int(NR * 0.9) + 1] / 1e3, v[p99] / 1e3, v[NR] / 1e3 }'
  awk '$1 > 10' "$1.frames" | sort -k2 -n | awk '{ v[NR] = $2 } END {
    p99 = int(NR * 0.99) + 1; if (p99 > NR) p99 = NR
    if (NR) printf "  after the first 10 frames: p99 %.3f ms, max %.3f ms\n", v[p99] / 1e3, v[NR] / 1e3 }'
  echo "  slowest frames (frame: us): $(sort -k2 -n -r "$1.frames" | head -12 | awk '{ printf "%s:%s ", $1, $2 }')"
}

live() {  # name "before" "after"
  local name=$1 before=$2 after=$3 log=$out/$1.log
  # shellcheck disable=SC2086
  gst env GST_DEBUG="stylepipe:6" gst-launch-1.0 videotestsrc is-live=true num-buffers="$frames" pattern=ball ! \
    video/x-raw,format=RGBA,width=256,height=240,framerate=60/1 $before ! \
    stylepipe config=configs/bench/xbr4.yaml backend=cuda $after ! fakesink sync=true >"$log" 2>&1 ||
    { echo "FAIL: $name: gst-launch-1.0"; tail -5 "$log"; return 1; }
  summary "$log" "$name" || return 1
  local stats
  stats=$(stats_of "$log")
  echo "  stats: frames $(field "$stats" frames) of $frames, p99 $(field "$stats" latency-p99-us) us," \
    "uploads $(field "$stats" uploads), pinned-frames $(field "$stats" pinned-frames), device-frames $(field "$stats" device-frames)"
  [ "$(field "$stats" frames)" = "$frames" ] || { echo "FAIL: $name: $((frames - $(field "$stats" frames))) frames dropped"; return 1; }
  [ "$(field "$stats" latency-p99-us)" -le 2000 ] || { echo "FAIL: $name: p99 over 2 ms"; return 1; }
}

live system_memory "" "" || status=1
live cuda_memory "! cudaupload ! video/x-raw(memory:CUDAMemory)" "! video/x-raw(memory:CUDAMemory) ! cudadownload" || true
exit $status
