# Sourced by the GPU scripts. The lent GPU machine has no FFmpeg, CLI11, json
# or fmt: where the checkout carries .devkit, unpack the kits, put their
# FFmpeg first, and set `kit_cmake_args` for cmake (empty elsewhere).
kit_cmake_args=()
if compgen -G ".devkit/*.tar.xz" >/dev/null; then  # .devkit may hold only clips (.devkit/live)
  mkdir -p /tmp/kit
  for t in .devkit/*.tar.xz; do [ -d "/tmp/kit/$(basename "$t" .tar.xz)" ] || tar -C /tmp/kit -xJf "$t"; done
  . /tmp/kit/ffmpeg-kit/env.sh
  # Its FFmpeg encodes only H.264: the NVDEC tests read HEVC, VP9 and AV1 clips
  # (and AV1 reference checksums) made elsewhere, in .devkit/clips.
  [ -d .devkit/clips ] && export SP_CODEC_CLIPS=$PWD/.devkit/clips
  kit_cmake_args+=(-DSTYLEPIPE_HEADERS_KIT=/tmp/kit/headers-kit)
fi
