// NVENC selection logic that needs no GPU: the encoder families, the reasons
// given for a fallback, and the x264 -> NVENC quality mapping.
#include "codecs/nvenc.h"

#include <gtest/gtest.h>

namespace sp {
namespace {

TEST(Nvenc, CounterpartsFollowTheCodecFamily) {
  const AVCodec* x264 = avcodec_find_encoder_by_name("libx264");
  ASSERT_NE(x264, nullptr);
  const AVCodec* nvenc = nvenc_counterpart(x264);
  if (!nvenc) GTEST_SKIP() << "this FFmpeg is built without h264_nvenc";
  EXPECT_STREQ(nvenc->name, "h264_nvenc");
  EXPECT_EQ(nvenc_counterpart(avcodec_find_encoder_by_name("ffv1")), nullptr);
  EXPECT_EQ(nvenc_counterpart(avcodec_find_encoder_by_name("png")), nullptr);
}

TEST(Nvenc, FailuresAreExplainedInWords) {
  // Lines as FFmpeg 5.1's nvenc wrapper logs them.
  EXPECT_EQ(explain_nvenc_failure(AVERROR(ENOSYS), "OpenEncodeSessionEx failed: unsupported device (2): (no details)"),
            "this GPU has no NVENC engine");
  EXPECT_EQ(explain_nvenc_failure(AVERROR(ENOSYS), "No capable devices found"), "this GPU has no NVENC engine");
  EXPECT_EQ(explain_nvenc_failure(AVERROR(ENOMEM), "OpenEncodeSessionEx failed: out of memory (10): (no details)"),
            "the NVENC session limit is reached");
  EXPECT_EQ(explain_nvenc_failure(AVERROR(EINVAL), "Cannot load libnvidia-encode.so.1"),
            "the NVENC driver library is unavailable (Cannot load libnvidia-encode.so.1)");
  const std::string other = explain_nvenc_failure(AVERROR(EINVAL), "");
  EXPECT_NE(other.find("NVENC refused to open"), std::string::npos) << other;
}

TEST(Nvenc, X264KnobsMapOntoNvenc) {
  EXPECT_EQ(nvenc_preset_for("ultrafast"), "p1");
  EXPECT_EQ(nvenc_preset_for("medium"), "p5");
  EXPECT_EQ(nvenc_preset_for("veryslow"), "p7");
  EXPECT_EQ(nvenc_preset_for("nonsense"), "p5");
  AVDictionary* options = nullptr;
  std::string settings;
  set_nvenc_options(&options, 23, "fast", true, &settings);
  EXPECT_STREQ(av_dict_get(options, "preset", nullptr, 0)->value, "p4");
  EXPECT_STREQ(av_dict_get(options, "cq", nullptr, 0)->value, "23");
  EXPECT_STREQ(av_dict_get(options, "delay", nullptr, 0)->value, "0");
  EXPECT_STREQ(av_dict_get(options, "bf", nullptr, 0)->value, "0");
  av_dict_free(&options);
  EXPECT_NE(settings.find("cq 23 preset p4"), std::string::npos) << settings;
}

TEST(Nvenc, ChoiceParsing) {
  EXPECT_EQ(parse_encoder_choice("auto"), EncoderChoice::automatic);
  EXPECT_EQ(parse_encoder_choice("nvenc"), EncoderChoice::nvenc);
  EXPECT_EQ(parse_encoder_choice("software"), EncoderChoice::software);
  EXPECT_FALSE(parse_encoder_choice("x264").has_value());
}

}  // namespace
}  // namespace sp
