#!/usr/bin/env bash
# Makes the clips the NVDEC tests read on the GPU machine, whose FFmpeg
# encodes only H.264: HEVC, VP9 and AV1 at 8 and 10 bits (1 s, 640x360, a
# test pattern with moving noise), and the AV1 reference frame checksums
# (dav1d decoding + the CPU backend), since that FFmpeg cannot decode AV1 in
# software. Run here (Debian FFmpeg: libx265, libvpx, libaom, libdav1d) after
# building; the GPU scripts carry .devkit.  Usage: scripts/make-codec-clips.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=.devkit/clips
bin=${STYLEPIPE:-build/stylepipe}
mkdir -p "$out"
clip() {  # name encoder pix_fmt noise_seed [encoder options...]
  local name=$1 encoder=$2 pix_fmt=$3 seed=$4; shift 4
  ffmpeg -v error -y -f lavfi -i "testsrc2=size=640x360:rate=25,noise=alls=20:allf=t:all_seed=$seed" -t 1 \
    -c:v "$encoder" "$@" -pix_fmt "$pix_fmt" "$out/$name"
}
clip h8.mkv libx265 yuv420p 1
clip h10.mkv libx265 yuv420p10le 2
clip vp9_8.webm libvpx-vp9 yuv420p 11 -deadline realtime -cpu-used 8 -crf 30 -b:v 0
clip vp9_10.webm libvpx-vp9 yuv420p10le 12 -deadline realtime -cpu-used 8 -crf 30 -b:v 0
clip av1_8.mkv libaom-av1 yuv420p 13 -cpu-used 8 -crf 30 -b:v 0
clip av1_10.mkv libaom-av1 yuv420p10le 14 -cpu-used 8 -crf 30 -b:v 0
for name in av1_8 av1_10; do
  "$bin" run configs/identity.yaml -i "$out/$name.mkv" -o "/tmp/$name.ref.mkv" -y --backend cpu --hwdec none \
    --codec ffv1 --progress none
  ffmpeg -v error -i "/tmp/$name.ref.mkv" -map 0:v -f framemd5 - >"$out/$name.framemd5"
done
ls -l "$out"
