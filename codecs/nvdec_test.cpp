// Which decoder NVDEC runs a stream with, decided without a GPU: FFmpeg's own
// decoder with the NVDEC hwaccel, even where the default decoder is another
// (libdav1d for AV1), and never a *_cuvid wrapper.
#include "codecs/nvdec.h"

#include <gtest/gtest.h>

namespace sp {
namespace {

bool has_cuda_hwaccel(const AVCodec* c) {
  for (int i = 0; const AVCodecHWConfig* h = avcodec_get_hw_config(c, i); ++i)
    if (h->device_type == AV_HWDEVICE_TYPE_CUDA) return true;
  return false;
}

TEST(Nvdec, PicksFfmpegsOwnDecoderWithTheNvdecHwaccel) {
  for (const AVCodecID id : {AV_CODEC_ID_H264, AV_CODEC_ID_HEVC, AV_CODEC_ID_VP9, AV_CODEC_ID_AV1}) {
    const AVCodec* chosen = nvdec_capable_decoder(id);
    const AVCodec* native = avcodec_find_decoder_by_name(avcodec_get_name(id));  // "h264", "hevc", "vp9", "av1"
    if (!native || !has_cuda_hwaccel(native)) {
      EXPECT_EQ(chosen, nullptr) << avcodec_get_name(id) << ": this FFmpeg has no NVDEC hwaccel for it";
      continue;
    }
    ASSERT_NE(chosen, nullptr) << avcodec_get_name(id);
    EXPECT_STREQ(chosen->name, native->name);
  }
  EXPECT_EQ(nvdec_capable_decoder(AV_CODEC_ID_FFV1), nullptr);
  EXPECT_EQ(nvdec_capable_decoder(AV_CODEC_ID_PNG), nullptr);
}

TEST(Nvdec, ModeParsing) {
  EXPECT_EQ(parse_hwdec("auto"), HwDecode::automatic);
  EXPECT_EQ(parse_hwdec("nvdec"), HwDecode::nvdec);
  EXPECT_EQ(parse_hwdec("none"), HwDecode::none);
  EXPECT_FALSE(parse_hwdec("cuda").has_value());
  EXPECT_STREQ(to_string(HwDecode::nvdec), "nvdec");
}

}  // namespace
}  // namespace sp
