// --jobs auto's GPUs for a chain: its estimate against the bench figures it
// stands for, and the decision's shape (never fewer GPUs for more work).
#include "orchestration/gpu_need.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/support/test_support.h"

namespace sp::test {
namespace {

std::optional<GpuCost> chain_cost(const std::string& pipeline, Size size) {
  return chain_gpu_cost(parse_config("pipeline:\n" + pipeline, "chain.yaml"), size);
}

// Longer line kernels cost more, as the stroke pass's taps grow with them
// (the bounds against their bench: gpu_cost_test.cpp).
TEST(GpuNeed, PencilsLongerStrokesCostMore) {
  EXPECT_GT(chain_cost("  - pencil: {line_length: 101}\n", {1920, 1080})->milliseconds,
            1.5 * chain_cost("  - pencil: {}\n", {1920, 1080})->milliseconds);
}

TEST(GpuNeed, StagesWithoutABoundLeaveTheChainUnknown) {
  const Size hd{1920, 1080};
  EXPECT_FALSE(chain_cost("  - pencil: {tone_solve: lu2012}\n", hd)) << "conjugate gradients up to cg_max_iterations";
  EXPECT_FALSE(chain_cost("  - halftone: {}\n", hd));
  EXPECT_FALSE(chain_cost("  - pencil: {}\n  - halftone: {}\n", hd)) << "one unknown stage: the chain is unknown";
}

GpuNeedQuestion pencil_on(int gpus, int cores) {
  GpuNeedQuestion q;
  q.gpus_listed = gpus;
  q.cores = cores;
  q.input = {1920, 1080};
  q.chain = chain_cost("  - pencil: {color: true}\n", q.input);
  q.software_encoder = "libx264";
  return q;
}

// Measured on a 4 x H200 host with 64 cores (docs/perf.md, sessions 33-34):
// pencil into libx264 ultrafast ran faster on one GPU than on two or four.
TEST(GpuNeed, PencilIntoX264TakesOneOfFourGpusOn64Cores) {
  const GpuNeed need = gpus_needed(pencil_on(4, 64));
  EXPECT_EQ(need.gpus, 1);
  EXPECT_NE(need.why.find("1 of 4 GPUs"), std::string::npos) << need.why;
  EXPECT_NE(need.why.find("libx264"), std::string::npos) << need.why;
}

// The encoder encodes what the chain gives it: an upscaled picture takes it
// longer a frame, so the GPUs have fewer frames to feed.
TEST(GpuNeed, TheEncoderIsCountedAtTheChainsOutputSize) {
  GpuNeedQuestion q;
  q.gpus_listed = 4;
  q.cores = 64;
  q.input = {480, 270};
  q.chain = chain_cost("  - xbr: {scale: 4}\n", q.input);
  q.software_encoder = "libx264";
  const GpuNeed need = gpus_needed(q);
  EXPECT_NE(need.why.find("at 480x270 (into 1920x1080)"), std::string::npos) << need.why;
  EXPECT_NE(need.why.find("encode libx264 at 3704 fps"), std::string::npos) << need.why;  // 64 x 120 / 2.07
  GpuNeedQuestion unscaled = q;  // the same GPU time with the input's pictures to encode: 16 times the frames
  unscaled.chain->output = q.input;
  EXPECT_GT(gpus_needed(unscaled).gpus, need.gpus) << gpus_needed(unscaled).why;
}

TEST(GpuNeed, EveryListedGpuWhereTheChainOrTheEncoderIsUnknown) {
  std::mt19937_64 rng(fresh_seed());
  const int gpus = 2 + int(rng() % 7);
  GpuNeedQuestion q = pencil_on(gpus, 1 + int(rng() % 128));
  q.software_encoder = "";  // NVENC, perhaps: one more encoder a GPU
  EXPECT_EQ(gpus_needed(q).gpus, gpus);
  EXPECT_EQ(gpus_needed(q).why, "");
  q = pencil_on(gpus, 1 + int(rng() % 128));
  q.chain.reset();
  EXPECT_EQ(gpus_needed(q).gpus, gpus);
  q = pencil_on(gpus, 1 + int(rng() % 128));
  q.input = {0, 0};  // the header does not say
  EXPECT_EQ(gpus_needed(q).gpus, gpus);
}

TEST(GpuNeed, MoreWorkOrMoreCoresNeverTakesAGpuAway) {
  std::mt19937_64 rng(fresh_seed());
  for (int round = 0; round < 200; ++round) {
    GpuNeedQuestion q = pencil_on(1 + int(rng() % 8), 1 + int(rng() % 256));
    q.input = {16 + int(rng() % 4000), 16 + int(rng() % 3000)};
    q.chain = GpuCost{0.01 + double(rng() % 10000) / 1000, q.input};
    const GpuNeed need = gpus_needed(q);
    EXPECT_GE(need.gpus, 1);
    EXPECT_LE(need.gpus, q.gpus_listed);
    EXPECT_EQ(need.why.empty(), need.gpus == q.gpus_listed) << need.why;
    GpuNeedQuestion more = q;
    more.cores += 1 + int(rng() % 64);
    more.chain->milliseconds *= 1.0 + double(rng() % 100) / 50;
    EXPECT_GE(gpus_needed(more).gpus, need.gpus) << more.cores << " cores, " << more.chain->milliseconds << " ms";
    GpuNeedQuestion larger = q;  // the same chain time on larger pictures: fewer frames a second to feed
    larger.chain->output.width *= 2;
    EXPECT_LE(gpus_needed(larger).gpus, need.gpus);
  }
}

// A warm-up frame is decoded and run on the GPUs, never encoded: it costs
// the run's busiest resource the chain's GPU time against the larger of that
// and the encoders' time a frame (x264 ultrafast at 120 megapixels a second
// a core, at its best).
TEST(WarmupWeight, IsTheChainsGpuTimeAgainstTheEncodersAtTheirBest) {
  std::mt19937_64 rng(fresh_seed());
  for (int round = 0; round < 200; ++round) {
    GpuNeedQuestion q = pencil_on(1 + int(rng() % 8), 1 + int(rng() % 256));
    q.input = {16 + int(rng() % 4000), 16 + int(rng() % 3000)};
    q.chain = GpuCost{0.01 + double(rng() % 10000) / 1000, {16 + int(rng() % 8000), 16 + int(rng() % 4000)}};
    const double gpu_ms = q.chain->milliseconds / q.gpus_listed;
    const double encoder_ms = 1000 * q.chain->output.width * double(q.chain->output.height) / 1e6 / (120.0 * q.cores);
    const double weight = warmup_weight(q);
    EXPECT_NEAR(weight, std::min(1.0, gpu_ms / encoder_ms), 1e-9) << gpu_ms << " ms on the GPUs, " << encoder_ms;
    GpuNeedQuestion more = q;  // more cores encode faster: the GPUs' share of the time grows
    more.cores += 1 + int(rng() % 64);
    EXPECT_GE(warmup_weight(more), weight);
    more = q;
    more.gpus_listed += 1 + int(rng() % 4);
    EXPECT_LE(warmup_weight(more), weight);
  }
}

// lowpoly's temporal mesh at 1080p on one H200 with 16 cores (session 37):
// two workers ran a 40 s clip 1.43x as fast as one. For --jobs auto to give
// them 20 s each, its 2.17 s of warm-up must weigh at most 20 / (20 x 2.17).
TEST(WarmupWeight, LowpolysTemporalMeshOnOneGpuOf16CoresWeighsUnderAHalf) {
  GpuNeedQuestion q = pencil_on(1, 16);
  q.chain = chain_cost("  - lowpoly: {temporal: true, color_smoothing: 0.5}\n", q.input);
  ASSERT_TRUE(q.chain);
  const double weight = warmup_weight(q);
  EXPECT_GT(weight, 0.05);
  EXPECT_LE(weight, 20 / (20 * 2.17));
  EXPECT_NEAR(weight, q.chain->milliseconds / (1000 * 1.920 * 1.080 / (16 * 120.0)), 1e-9);
}

TEST(WarmupWeight, AWholeFrameWhereTheChainOrTheEncoderIsUnknown) {
  std::mt19937_64 rng(fresh_seed());
  GpuNeedQuestion q = pencil_on(1 + int(rng() % 8), 1 + int(rng() % 16));
  ASSERT_LT(warmup_weight(q), 1);
  q.software_encoder = "";  // NVENC, perhaps, at a rate the estimate does not bound
  EXPECT_EQ(warmup_weight(q), 1);
  q = pencil_on(1 + int(rng() % 8), 1 + int(rng() % 128));
  q.chain.reset();
  EXPECT_EQ(warmup_weight(q), 1);
  q = pencil_on(1 + int(rng() % 8), 1 + int(rng() % 128));
  q.input = {0, 0};
  EXPECT_EQ(warmup_weight(q), 1);
  q = pencil_on(0, 16);  // the CPU backend: the warm-up runs on the cores
  EXPECT_EQ(warmup_weight(q), 1);
}

}  // namespace
}  // namespace sp::test
