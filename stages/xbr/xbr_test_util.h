#pragma once
// Oracles and inputs for the xbr tests (implemented in xbr_oracle_test.cpp).
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace sp::test {

// Runs FFmpeg's own xbr filter (libavfilter: buffer -> xbr=n -> buffersink,
// all in AV_PIX_FMT_0RGB32, so no conversion happens). The input's alpha
// travels in FFmpeg's padding byte; the result carries FFmpeg's RGB and its
// raw padding byte as alpha. All frames must have the same size; one graph
// serves them all (building one costs FFmpeg a 2^24-entry table).
std::vector<HostImage> ffmpeg_xbr(const std::vector<HostImage>& frames, int n);

// FFmpeg's rgbtoyuv table, built by the loop of vf_xbr.c's init().
std::vector<uint32_t> ffmpeg_rgbtoyuv_table();

// Decodes an image file with libavformat/libavcodec into RGBA (point
// conversion from its native format). Returns an empty image on failure.
HostImage load_image_rgba(const std::string& path);

// Encodes frames with the ffmpeg CLI (libx264 at `crf`, yuv420p) and decodes
// them back to RGBA: what pixel art looks like after a lossy codec.
std::vector<HostImage> lossy_roundtrip(const std::vector<HostImage>& frames, int crf);

// Pixel-art tile sheets from the Debian package mirrormagic-data (see
// scripts/install-deps.sh); only those present on this machine.
std::vector<std::string> pixel_art_files();

}  // namespace sp::test
