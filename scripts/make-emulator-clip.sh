#!/usr/bin/env bash
# Makes .devkit/live/nes_scroller_256x240_60fps.mkv, the emulator recording
# that scripts/live-tail.sh feeds through the live pipeline: our own NES
# program (scripts/emulator-clip/scroller.s, public domain) assembled with
# cc65, run headless in Mednafen, which records every emulated frame
# (-qtrecord, PNG: lossless), then cut to SECONDS s at exactly 60 fps and
# stored losslessly (H.264 RGB, qp 0). At ~10 MB it is not committed: it
# goes under .devkit/ (ignored), which the GPU runs carry anyway.
# Usage: scripts/make-emulator-clip.sh [OUTPUT] [SECONDS]   (Debian: apt-get install cc65 mednafen ffmpeg)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.devkit/live/nes_scroller_256x240_60fps.mkv}
seconds=${2:-32}
for tool in ca65 ld65 ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || { echo "make-emulator-clip: $tool is missing (apt-get install cc65 ffmpeg)" >&2; exit 69; }
done
mednafen=$(command -v mednafen || echo /usr/games/mednafen)
[ -x "$mednafen" ] || { echo "make-emulator-clip: mednafen is missing (apt-get install mednafen)" >&2; exit 69; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ca65 scripts/emulator-clip/scroller.s -o "$work/scroller.o"
ld65 -C scripts/emulator-clip/nrom.cfg "$work/scroller.o" -o "$work/scroller.nes"

# Headless: SDL's dummy drivers and Mednafen's software framebuffer, no
# sound. Mednafen paces emulation at the NES's 60.1 Hz and records each
# emulated frame, full height (scanlines 0-239, not the 8-231 a TV shows),
# at native width (no doubling). SIGINT ends it cleanly, with the index
# written. The first 10 frames (before the program turns rendering on) are cut.
export MEDNAFEN_HOME=$work/home XDG_RUNTIME_DIR=$work/xdg SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy
mkdir -p "$MEDNAFEN_HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
skip=10
record_seconds=$((seconds + 3))
timeout -s INT "$record_seconds" "$mednafen" -video.driver softfb -sound 0 -nes.slstart 0 -nes.slend 239 \
  -qtrecord "$work/record.mov" -qtrecord.vcodec png -qtrecord.w_double_threshold 0 -qtrecord.h_double_threshold 0 \
  "$work/scroller.nes" >"$work/mednafen.log" 2>&1 || true
[ -s "$work/record.mov" ] || { tail -20 "$work/mednafen.log" >&2; echo "make-emulator-clip: mednafen recorded nothing" >&2; exit 70; }

frames=$((seconds * 60))
recorded=$(ffprobe -v error -count_frames -select_streams v -show_entries stream=nb_read_frames -of default=nw=1:nk=1 "$work/record.mov" | head -1 | tr -dc 0-9)
if [ "$recorded" -lt $((frames + skip)) ]; then
  echo "make-emulator-clip: only $recorded frames recorded, $((frames + skip)) needed (a slow machine: run it again)" >&2
  exit 70
fi
# Every frame moves (1 px of scroll at least): two equal neighbours would be
# a repeated frame, not an emulated one.
repeats=$(ffmpeg -v error -i "$work/record.mov" -f framemd5 - | grep -v '^#' | awk -F, '{print $6}' | uniq -d | wc -l)
[ "$repeats" -eq 0 ] || { echo "make-emulator-clip: $repeats frames repeat their predecessor" >&2; exit 70; }

mkdir -p "$(dirname "$out")"
# NES frames come at 60.0988 Hz; the clip plays them at exactly 60 fps, one
# frame each (setpts), as an emulator capture piped at 60 fps would.
ffmpeg -v error -y -i "$work/record.mov" -an \
  -vf "select=gte(n\,$skip),setpts=N/(60*TB)" -r 60 -frames:v "$frames" \
  -c:v libx264rgb -qp 0 -preset veryslow -pix_fmt bgr0 \
  -metadata title="scroller.nes in Mednafen $("$mednafen" 2>&1 | sed -n 's/^Starting Mednafen //p' | head -1), $frames frames" "$out"
# Lossless check: the stored frames equal the recorded ones, byte for byte.
want=$(ffmpeg -v error -i "$work/record.mov" -vf "select=gte(n\,$skip),setpts=N/(60*TB)" -r 60 -frames:v "$frames" \
  -pix_fmt rgb24 -f rawvideo - | md5sum)
got=$(ffmpeg -v error -i "$out" -pix_fmt rgb24 -f rawvideo - | md5sum)
[ "$want" = "$got" ] || { echo "make-emulator-clip: $out differs from the recording" >&2; exit 70; }
echo "$out: $frames frames, 256x240, 60 fps, $(stat -c %s "$out") bytes (lossless, checked)"
