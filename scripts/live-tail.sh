#!/usr/bin/env bash
# Live latency tail on a real emulator recording: the clip's frames as raw
# RGBA through a pipe, paced at 60 fps by `ffmpeg -re`, into
# `stylepipe run CONFIG --low-latency`, out through a pipe to a reader that
# takes what the pipe holds (as a player would); once with raw RGBA output,
# once with y4m. Prints latency p50/p99/max, drops, each step's percentiles
# and the timeline of the worst frames, from --stats-json.
#
# Usage: scripts/live-tail.sh [SECONDS]
#   CONFIG=configs/xbr-live.yaml  BACKEND=auto|cuda|cpu  OUTPUTS="rgba y4m"  RUNS=1
#   CLIP=.devkit/live/nes_scroller_256x240_60fps.mkv (scripts/make-emulator-clip.sh makes it)
#   STYLEPIPE=path/to/stylepipe   OUT=folder for the stats (the device tool sets it)
# On the GPU machine (no system FFmpeg) it sources scripts/devkit-env.sh and,
# without STYLEPIPE, builds stylepipe into build-gpu-dev like scripts/gpu-dev.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
config=${CONFIG:-configs/xbr-live.yaml}
backend=${BACKEND:-auto}
outputs=${OUTPUTS:-rgba y4m}
runs=${RUNS:-1}
clip=${CLIP:-.devkit/live/nes_scroller_256x240_60fps.mkv}
out=${OUT:-/tmp/live-tail}
mkdir -p "$out"
. scripts/devkit-env.sh
command -v ffmpeg >/dev/null || { echo "live-tail: no ffmpeg (here: apt-get install ffmpeg; GPU machine: carry .devkit)" >&2; exit 69; }
command -v python3 >/dev/null || { echo "live-tail: python3 is needed to read the stats" >&2; exit 69; }

if [ ! -f "$clip" ]; then
  if command -v ca65 >/dev/null && { command -v mednafen || [ -x /usr/games/mednafen ]; } >/dev/null; then
    scripts/make-emulator-clip.sh "$clip"
  else
    echo "live-tail: $clip is missing: run scripts/make-emulator-clip.sh on a machine with cc65 and mednafen" \
         "(the GPU runs carry it under .devkit/)" >&2
    exit 66
  fi
fi

binary=${STYLEPIPE:-}
if [ -z "$binary" ]; then
  if { command -v nvidia-smi >/dev/null || [ -e /dev/nvidiactl ]; } && compgen -G ".devkit/*.tar.xz" >/dev/null; then
    scripts/gpu-dev.sh stylepipe || { echo "live-tail: building stylepipe failed" >&2; exit 70; }
    binary=build-gpu-dev/stylepipe
  else
    binary=build/stylepipe
  fi
fi
[ -x "$binary" ] || { echo "live-tail: $binary is not built (scripts/build.sh, or set STYLEPIPE)" >&2; exit 66; }

# The producer reads raw frames: decoding the clip on the fly would put its
# own jitter into the pacing.
size=$(ffprobe -v error -select_streams v -show_entries stream=width,height -of csv=s=x:p=0 "$clip" | head -1)
# (Not under $OUT: the device tool would carry its ~470 MB back.)
raw=${TMPDIR:-/tmp}/live-tail-$(basename "$clip" .mkv).rgba
[ -s "$raw" ] && [ "$raw" -nt "$clip" ] || ffmpeg -v error -y -i "$clip" -f rawvideo -pix_fmt rgba "$raw"
echo "clip: $clip ($size, $(( $(stat -c %s "$raw") / ($(echo "$size" | tr x '*') * 4) )) frames); ${seconds} s a run" \
     "through $config, backend $backend, $binary"

run_once() {  # OUTPUT_KIND RUN
  local kind=$1 stats=$out/$1_run$2.json format
  case $kind in
    rgba) format=(-f rawvideo --pix-fmt rgba) ;;
    y4m) format=(-f yuv4mpegpipe) ;;
    *) echo "live-tail: unknown output '$kind' (rgba or y4m)" >&2; return 64 ;;
  esac
  ffmpeg -v error -re -f rawvideo -pix_fmt rgba -s "$size" -r 60 -i "$raw" -t "$seconds" -c:v rawvideo -f rawvideo - |
    "$binary" run "$config" -f rawvideo --pix-fmt rgba --size "$size" --rate 60 -i - --low-latency \
      "${format[@]}" -o - --backend "$backend" --progress none --stats-json "$stats" 2>"$out/$1_run$2.log" |
    dd of=/dev/null bs=16M status=none
  local status=("${PIPESTATUS[@]}")
  if [ "${status[1]}" -ne 0 ]; then
    echo "live-tail: stylepipe exited ${status[1]} ($kind, run $2):" >&2
    tail -5 "$out/$1_run$2.log" >&2
    return 1
  fi
  python3 - "$stats" "$kind" "$2" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
kind, run = sys.argv[2], sys.argv[3]
f, lat, t = s["frames"], s["latency_ms"], s.get("timeline", {})
print(f"\n== {kind} output, run {run}: backend {s['backend']['name']}, encoder {s['encoder']['name']}")
print(f"frames in {f['in']} out {f['out']} dropped {f['dropped']}")
print(f"latency (read -> written) ms: p50 {lat['p50']:.3f}  p99 {lat['p99']:.3f}  max {lat['max']:.3f}")
steps = t.get("steps_ms", {})
if steps:
    print(f"{'step (ms)':<22}{'p50':>9}{'p99':>9}{'max':>9}")
    for name in ["arrival_to_read", "read_to_taken", "taken_to_processed", "processed_to_write", "write",
                 "latency", "arrival_to_written"]:
        v = steps[name]
        print(f"{name:<22}{v['p50']:>9.3f}{v['p99']:>9.3f}{v['max']:>9.3f}")
gpu = s["steps_ms"]
chain = " ".join(f"{st['name']} {st['ms']['p50']:.3f}" for st in s["stages"])
print(f"engine p50 ms: upload {gpu['upload']['p50']:.3f} convert_in {gpu['convert_in']['p50']:.3f} {chain} "
      f"convert_out {gpu['convert_out']['p50']:.3f} download {gpu['download']['p50']:.3f}")
worst = t.get("worst", [])
if worst:
    print("worst frames (ms): frame   at_s  latency  arrival>read  read>taken  taken>processed  processed>write  write")
    for w in worst:
        print(f"{'':18}{w['frame']:>6} {w['at_seconds']:>6.2f} {w['latency_ms']:>8.3f} {w['arrival_to_read_ms']:>13.3f}"
              f" {w['read_to_taken_ms']:>11.3f} {w['taken_to_processed_ms']:>16.3f} {w['processed_to_write_ms']:>16.3f}"
              f" {w['write_ms']:>6.3f}")
EOF
}

failed=0
for kind in $outputs; do
  for run in $(seq "$runs"); do run_once "$kind" "$run" || failed=1; done
done
echo; echo "stats: $out/*.json"
exit $failed
