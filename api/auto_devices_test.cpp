// --jobs auto over several GPUs: which of them a run keeps, on a 4-GPU host's
// facts (the decision reads them before CUDA starts, so any host can be
// given), with a real clip, configs and the run's own output settings.
#include "api/auto_devices.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "codecs/nvenc.h"
#include "orchestration/gpu_need.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

class AutoDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(fresh_seed());
    for (int i = 0; i < 4; ++i) host_.gpus.push_back({"GPU-" + std::to_string(rng()), "NVIDIA H200"});
    host_.visible = 4;
    host_.cores = 64;
    host_.nvenc_cache = dir_.file("gpus-without-nvenc");
    clip_ = dir_.file("hd.mp4");
    ASSERT_EQ(ffmpeg("-f lavfi -i testsrc2=size=1920x1080:rate=30 -frames:v 3 -c:v libx264 -preset ultrafast "
                     "-pix_fmt yuv420p " + shell_quote(clip_)).exit_code, 0);
  }

  stylepipe::TranscodeRequest request(const std::string& stage) {
    const std::string config = dir_.file(stage.substr(0, stage.find(':')) + ".yaml");
    std::ofstream(config) << "pipeline:\n  - " << stage << "\n";
    stylepipe::TranscodeRequest r;
    r.config_path = config;
    r.input = clip_;
    r.output = dir_.file("out.mp4");
    r.codec = "libx264";
    r.encoder = "software";
    r.jobs = stylepipe::TranscodeRequest::kJobsAuto;
    r.devices = "all";
    return r;
  }

  std::string devices(const stylepipe::TranscodeRequest& r) { return stylepipe::detail::auto_devices(r, host_).devices; }

  TempDir dir_;
  stylepipe::detail::GpuHostFacts host_;
  std::string clip_;
};

TEST_F(AutoDevices, PencilIntoX264KeepsTheFirstListedGpu) {
  const stylepipe::detail::AutoDevices chosen = stylepipe::detail::auto_devices(request("pencil: {color: true}"), host_);
  EXPECT_EQ(chosen.devices, "0");
  EXPECT_NE(chosen.reason.find("1 of 4 GPUs"), std::string::npos) << chosen.reason;
  EXPECT_NE(chosen.reason.find("64 cores"), std::string::npos) << chosen.reason;
  stylepipe::TranscodeRequest r = request("pencil: {color: true}");
  r.devices = "2,2,3,1";
  EXPECT_EQ(devices(r), "2");
  host_.cores = 128;  // encoders that could take more than one GPU's pencil at their best
  EXPECT_EQ(devices(request("pencil: {color: true}")), "0,1");
}

// The stages' bounds were measured on H100s and H200s: a GPU of less
// bandwidth could need every GPU for the same chain.
TEST_F(AutoDevices, GpusSlowerThanThoseMeasuredKeepEveryGpu) {
  std::mt19937_64 rng(fresh_seed());
  host_.gpus[rng() % host_.gpus.size()].model = rng() % 2 ? "NVIDIA L4" : "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(devices(request("pencil: {color: true}")), "all");
  for (auto& gpu : host_.gpus) gpu.model = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(devices(request("pencil: {color: true}")), "0");
}

TEST_F(AutoDevices, GpuBoundOrUnknownChainsKeepEveryGpu) {
  EXPECT_EQ(stylepipe::detail::auto_devices(request("halftone: {channels: cmy}"), host_).reason, "");
  EXPECT_EQ(devices(request("halftone: {channels: cmy}")), "all");
  EXPECT_EQ(devices(request("pencil: {tone_solve: lu2012}")), "all");
}

TEST_F(AutoDevices, AnEncoderThatMayBeNvencKeepsEveryGpuUntilTheModelIsKnownWithoutIt) {
  stylepipe::TranscodeRequest r = request("pencil: {}");
  r.encoder = "auto";
  EXPECT_EQ(devices(r), "all") << "each GPU may bring its NVENC";
  r.encoder = "nvenc";
  EXPECT_EQ(devices(r), "all");
  r.encoder = "auto";
  list_without_nvenc(host_.nvenc_cache, host_.gpus[2].uuid + " CUDA driver 13000");
  EXPECT_EQ(devices(r), "0") << "GPU 2 was found without NVENC, and the others are of its model";
  r.codec = "ffv1";  // a rate the estimate does not bound
  EXPECT_EQ(devices(r), "all");
}

TEST_F(AutoDevices, OtherRequestsAreLeftAsTheyAre) {
  stylepipe::TranscodeRequest r = request("pencil: {}");
  r.jobs = 4;
  EXPECT_EQ(devices(r), "all");
  r = request("pencil: {}");
  r.backend = "cpu";
  EXPECT_EQ(devices(r), "all");
  r = request("pencil: {}");
  r.devices = "0,7";  // a GPU the host lacks: the run refuses the list
  EXPECT_EQ(devices(r), "0,7");
  r.devices = "1";
  EXPECT_EQ(devices(r), "1");
  r = request("pencil: {}");
  r.input = dir_.file("absent.mp4");  // the run's own error names it
  EXPECT_EQ(devices(r), "all");
  r = request("pencil: {}");
  r.frames = 2;  // one stream: a single run
  EXPECT_EQ(devices(r), "all");
  r = request("pencil: {}");
  r.inputs = {clip_};  // a batch counts its clips at a time by the GPUs listed (8 each)
  r.output = dir_.file("{stem}_{index}.mp4");
  EXPECT_EQ(devices(r), "all");
  host_.gpus.clear();  // a host whose driver lists no GPU
  EXPECT_EQ(devices(request("pencil: {}")), "all");
}

// A warm-up frame weighs less than a whole one only where it takes none of
// the cores the encoders need: NVDEC decodes it, every stage bounds its GPU
// time on GPUs like those measured, and the encoder is x264 for sure.
TEST_F(AutoDevices, AWarmUpWeighsLessOnlyWhereItTakesNoCores) {
  host_.cores = 16;
  const sp::Config lowpoly = sp::load_config(request("lowpoly: {temporal: true, color_smoothing: 0.5}").config_path);
  const sp::InputLength hd = sp::probe_input_length(clip_);
  ASSERT_EQ(hd.codec, "h264");
  auto weight = [&](const stylepipe::TranscodeRequest& r, const sp::InputLength& input = {}) {
    return stylepipe::detail::warmup_weight(r, lowpoly, input.codec.empty() ? hd : input, 1, host_);
  };
  const stylepipe::TranscodeRequest base = request("lowpoly: {}");
  EXPECT_NEAR(weight(base), sp::warmup_weight([&] {
                sp::GpuNeedQuestion q;
                q.gpus_listed = 1;
                q.cores = 16;
                q.input = {1920, 1080};
                q.chain = sp::chain_gpu_cost(lowpoly, q.input);
                q.software_encoder = "libx264";
                return q;
              }()),
              1e-12);
  EXPECT_LT(weight(base), 0.5);
  stylepipe::TranscodeRequest r = base;
  r.hwdec = "none";  // the cores decode it
  EXPECT_EQ(weight(r), 1);
  r = base;
  r.backend = "cpu";
  EXPECT_EQ(weight(r), 1);
  r = base;
  r.encoder = "auto";  // NVENC, perhaps
  EXPECT_EQ(weight(r), 1);
  sp::InputLength ffv1 = hd;  // a codec NVDEC does not take decodes on the cores
  ffv1.codec = "ffv1";
  EXPECT_EQ(weight(base, ffv1), 1);
  EXPECT_EQ(stylepipe::detail::warmup_weight(base, lowpoly, hd, 0, host_), 1) << "no GPU";
  const sp::Config halftone = sp::load_config(request("halftone: {channels: cmy}").config_path);
  EXPECT_EQ(stylepipe::detail::warmup_weight(base, halftone, hd, 1, host_), 1) << "no bound on its GPU time";
  host_.gpus[1].model = "NVIDIA L4";
  EXPECT_EQ(weight(base), 1);
}

}  // namespace
}  // namespace sp::test
