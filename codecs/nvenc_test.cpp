// NVENC selection logic that needs no GPU: the encoder families, the reasons
// given for a fallback, and the x264 -> NVENC quality mapping.
#include "codecs/nvenc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "codecs/codec_test_util.h"
#include "tests/support/test_support.h"

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

// Sets an environment variable for the test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string random_identity(std::mt19937_64& rng) {
  return "GPU-" + std::to_string(rng()) + "-" + std::to_string(rng()) + " CUDA driver " + std::to_string(rng() % 20000);
}

TEST(Nvenc, GpusWithoutAnEngineAreKeptBetweenProcessesOneLineEach) {
  std::mt19937_64 rng(test::fresh_seed());
  codec_test::TempDir dir;
  const std::string root = dir.file("root");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", root.c_str());
    EXPECT_EQ(gpus_without_nvenc_path(), root + "/stylepipe/gpus-without-nvenc");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr), home("HOME", root.c_str());
    EXPECT_EQ(gpus_without_nvenc_path(), root + "/.cache/stylepipe/gpus-without-nvenc");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr), home("HOME", nullptr);
    EXPECT_EQ(gpus_without_nvenc_path(), "");
  }
  const std::string path = root + "/made/by/the/first/one/gpus-without-nvenc";
  const std::string h100 = random_identity(rng), h200 = random_identity(rng), l4 = random_identity(rng);
  EXPECT_FALSE(listed_without_nvenc(path, h100)) << "no file yet";
  list_without_nvenc(path, h100);
  list_without_nvenc(path, h200);
  list_without_nvenc(path, h100);  // a second process that found the same
  EXPECT_TRUE(listed_without_nvenc(path, h100));
  EXPECT_TRUE(listed_without_nvenc(path, h200));
  EXPECT_FALSE(listed_without_nvenc(path, l4));
  EXPECT_FALSE(listed_without_nvenc(path, h100.substr(0, h100.size() - 1))) << "whole lines only";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, h100 + "\n" + h200 + "\n");
  // Where the cache cannot be written (a file stands where its folder would be), nothing happens.
  const std::string blocked = path + "/under/a/file";
  list_without_nvenc(blocked, l4);
  EXPECT_FALSE(listed_without_nvenc(blocked, l4));
  list_without_nvenc("", l4);
}

TEST(Nvenc, GpusOfAListedModelAreKnownWithoutAnEngineBeforeCudaStarts) {
  std::mt19937_64 rng(test::fresh_seed());
  codec_test::TempDir dir;
  const std::string path = dir.file("gpus-without-nvenc");
  auto gpu = [&](const std::string& model) { return DriverGpu{"GPU-" + std::to_string(rng()), model}; };
  const DriverGpu h200_a = gpu("NVIDIA H200"), h200_b = gpu("NVIDIA H200"), l4 = gpu("NVIDIA L4");
  EXPECT_FALSE(known_without_nvenc(path, {h200_a})) << "no file yet";
  // The file's lines are cuda_device_identity()'s: the UUID, then the driver.
  list_without_nvenc(path, h200_a.uuid + " CUDA driver " + std::to_string(rng() % 20000));
  EXPECT_TRUE(known_without_nvenc(path, {h200_a}));
  EXPECT_TRUE(known_without_nvenc(path, {h200_a, h200_b})) << "another GPU of the listed one's model";
  EXPECT_FALSE(known_without_nvenc(path, {h200_b})) << "a model is learnt from a listed GPU among those asked about";
  EXPECT_FALSE(known_without_nvenc(path, {h200_a, l4})) << "an L4 has NVENC as far as anyone here knows";
  EXPECT_FALSE(known_without_nvenc(path, {})) << "no GPUs listed: nothing known";
  EXPECT_FALSE(known_without_nvenc(path, {DriverGpu{h200_a.uuid.substr(0, 6), "NVIDIA H200"}})) << "whole UUIDs only";
}

TEST(Nvenc, ChoiceParsing) {
  EXPECT_EQ(parse_encoder_choice("auto"), EncoderChoice::automatic);
  EXPECT_EQ(parse_encoder_choice("nvenc"), EncoderChoice::nvenc);
  EXPECT_EQ(parse_encoder_choice("software"), EncoderChoice::software);
  EXPECT_FALSE(parse_encoder_choice("x264").has_value());
}

}  // namespace
}  // namespace sp
