#!/usr/bin/env bash
# Regenerates the seed corpora of the media and pipe fuzz harnesses
# (tests/fuzz/corpus/{media,pipe}): a few frames of a test pattern at 32x24
# (16x12 for raw pipes) in the containers, codecs and pixel layouts the
# reader meets, each a few KB. Needs the ffmpeg CLI. Usage: scripts/make-fuzz-corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
media=tests/fuzz/corpus/media
pipe=tests/fuzz/corpus/pipe
mkdir -p "$media" "$pipe"
src="testsrc2=size=32x24:rate=25"
# Bit-exact and without tags, so that a rerun gives the same bytes.
exact=(-fflags +bitexact -flags +bitexact -map_metadata -1)
ff() { ffmpeg -v error -y "$@"; }

clip() {  # name frames codec pix_fmt [options...]
  local name=$1 frames=$2 codec=$3 pix_fmt=$4; shift 4
  ff -f lavfi -i "$src" -frames:v "$frames" -c:v "$codec" -pix_fmt "$pix_fmt" "$@" "${exact[@]}" "$media/$name"
}
clip h264.mp4 4 libx264 yuv420p -preset ultrafast -g 2 -bf 1
clip h264.ts 3 libx264 yuv420p -preset ultrafast
clip mpeg4.mp4 3 mpeg4 yuv420p -g 2
clip vp9.webm 3 libvpx-vp9 yuv420p -deadline realtime -cpu-used 8
clip mjpeg.avi 2 mjpeg yuvj422p
clip ffv1_yuv444p.mkv 2 ffv1 yuv444p
clip ffv1_gray.nut 2 ffv1 gray
clip ffv1_yuv422p10.mkv 2 ffv1 yuv422p10le
clip png_rgba.nut 2 png rgba
clip raw_bgr0.nut 2 rawvideo bgr0
clip raw_nv12.nut 2 rawvideo nv12
clip ffv1_yuv420p10.mkv 2 ffv1 yuv420p10le
clip gif_pal8.gif 2 gif pal8
y4m() {  # name frames pix_fmt size (testsrc: testsrc2 rounds odd sizes to even)
  ff -f lavfi -i "testsrc=size=$4:rate=25" -frames:v "$2" -pix_fmt "$3" "${exact[@]}" "$media/$1"
}
y4m yuv420p.y4m 3 yuv420p 32x24
y4m yuv444p.y4m 2 yuv444p 32x24
y4m gray.y4m 2 gray 32x24
y4m odd_31x23.y4m 2 yuv420p 31x23  # chroma planes round up
# A copied audio stream beside the video.
ff -f lavfi -i "$src" -f lavfi -i "sine=frequency=440:sample_rate=8000" -frames:v 3 -t 0.12 \
  -c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a pcm_s16le -ac 1 "${exact[@]}" "$media/h264_pcm.mkv"

# Pipe harness inputs: 4 header bytes (tests/fuzz/pipe_fuzz.cpp), then the stream.
header() { printf "\\x$(printf %02x "$1")\\x$(printf %02x "$2")\\x$(printf %02x "$3")\\x$(printf %02x "$4")"; }
for y4m in yuv420p gray; do
  { header 1 0 0 0; cat "$media/$y4m.y4m"; } >"$pipe/y4m_$y4m"
done
{ header 3 0 0 0; cat "$media/yuv444p.y4m"; } >"$pipe/y4m_yuv444p_low_latency"
raw() {  # pix_fmt index_in_kRawFormats [mode bits]
  local pix_fmt=$1 index=$2 bits=${3:-0}
  { header $((index << 2 | bits)) 15 11 24
    ffmpeg -v error -f lavfi -i "testsrc2=size=16x12:rate=25" -frames:v 2 -f rawvideo -pix_fmt "$pix_fmt" -; \
  } >"$pipe/raw_$pix_fmt$( ((bits)) && echo _low_latency)"
}
raw rgba 0
raw yuv420p 4
raw nv12 6
raw p010le 7
raw yuyv422 8 2
raw yuv422p10le 9
raw gbrp 11
du -cb "$media" "$pipe" | tail -1
