// Seams of a segment-parallel run: the worker before a seam runs the state
// the next worker starts, to the bit, and hands its picture over to it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_test_util.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

constexpr double kFps = 25;

Params seam_params(double seam_seconds, double hold, bool deterministic) {
  Params p = halftone_default_params();
  p.set("deterministic", deterministic);
  p.set("hold_distance", hold);
  p.set("iterations", int64_t(20));
  p.set("video_iterations", int64_t(6));
  p.set("seam_seconds", seam_seconds);
  return p;
}

// Share of the pixels where two pictures are equal.
double equal_share(const test::HostImage& a, const test::HostImage& b) {
  size_t same = 0;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x) same += a.view().row32(y)[x] == b.view().row32(y)[x];
  return double(same) / (double(a.width) * a.height);
}

struct SeamRun {
  std::vector<test::HostImage> before, after, alone;  // the worker before the seam, after it, and a single run
};

// Frames 0 .. seam_frame - 1 through the worker before the seam and through
// a stage without seams; frames 0 .. end through the worker after it.
SeamRun run_at_seam(const std::vector<test::HostImage>& clip, int seam_frame, double seam_seconds, Backend backend,
                    std::vector<float2>* handed_over = nullptr, std::vector<float2>* started = nullptr,
                    double hold = 0, bool deterministic = false) {
  const double seam = seam_frame / kFps;
  HalftoneStage before(parse_halftone_params(seam_params(seam_seconds, hold, deterministic))), after(before.settings()),
      alone(before.settings());
  before.set_seams({std::nullopt, seam});
  after.set_seams({seam, std::nullopt});
  const int w = clip[0].width, h = clip[0].height;
  StageRunner rb(before, w, h, backend), ra(after, w, h, backend), rs(alone, w, h, backend);
  SeamRun run;
  for (int f = 0; f < int(clip.size()); ++f) {
    if (f < seam_frame) {
      run.before.push_back(rb.process(clip[size_t(f)], f, f / kFps));
      run.alone.push_back(rs.process(clip[size_t(f)], f, f / kFps));
    }
    run.after.push_back(ra.process(clip[size_t(f)], f, f / kFps));
    if (f == seam_frame - 1) {
      EXPECT_NE(before.handover_state(), nullptr);
      if (handed_over && before.handover_state()) *handed_over = before.handover_state()->particles();
      if (started) *started = after.particles();
    }
  }
  return run;
}

// Before the handover the picture is the single run's; through it, more and
// more of it is the next worker's, and the last frame before the seam is
// wholly the next worker's picture: the seam is a step of one state.
void expect_handover(const SeamRun& run, int seam_frame, double seam_seconds, double last_share = 1.0,
                     double differing = 0) {
  const int first_handover = int(std::ceil((seam_frame / kFps - seam_seconds) * kFps - 1e-9));
  std::vector<double> shares;
  for (int f = 0; f < seam_frame; ++f) {
    if (f < first_handover) {
      EXPECT_LE(1 - equal_share(run.before[size_t(f)], run.alone[size_t(f)]), differing) << "frame " << f;
      continue;
    }
    shares.push_back(equal_share(run.before[size_t(f)], run.after[size_t(f)]));
    std::printf("frame %d: %.2f of the picture is the next worker's\n", f, shares.back());
  }
  ASSERT_GE(shares.size(), 4u);
  for (size_t i = 1; i < shares.size(); ++i) EXPECT_GT(shares[i], shares[i - 1] + 0.02) << "step " << i;
  EXPECT_LT(shares.front(), 0.5);
  EXPECT_GE(shares.back(), last_share);
}

TEST(HalftoneSeams, TheWorkerBeforeASeamRunsTheNextWorkersStateAndHandsOverToIt) {
  std::mt19937_64 rng(test::fresh_seed() + 31);
  const auto clip = panning_clip(96, 72, 16, 1, rng);
  const int seam_frame = 10 + int(rng() % 3);
  const double seam_seconds = 0.2;  // 5 frames
  std::vector<float2> handed_over, started;
  const SeamRun run = run_at_seam(clip, seam_frame, seam_seconds, Backend::cpu, &handed_over, &started);
  ASSERT_FALSE(started.empty());
  ASSERT_EQ(handed_over.size(), started.size());
  EXPECT_EQ(same_dots(handed_over, started), started.size()) << "the same frames from the same cold start: the same dots, to the bit";
  expect_handover(run, seam_frame, seam_seconds);
}

// Held dots (hold_distance) are state too: the worker after the seam holds
// them as the next state of the worker before it did, so the handover still
// ends in the next worker's picture, to the pixel (expect_handover's last share).
TEST(HalftoneSeams, HeldDotsHandOverToTheNextWorkersPicture) {
  std::mt19937_64 rng(test::fresh_seed() + 34);
  const auto clip = panning_clip(96, 72, 16, 1, rng);
  const int seam_frame = 10 + int(rng() % 3);
  const SeamRun run = run_at_seam(clip, seam_frame, 0.2, Backend::cpu, nullptr, nullptr, 0.3);
  expect_handover(run, seam_frame, 0.2);
}

TEST(HalftoneSeams, HandoverSharesAreSharesOfThePicture) {
  std::mt19937_64 rng(test::fresh_seed() + 32);
  const uint64_t seed = rng();
  const float inv_cell = 1.f / (4.f + float(rng() % 13));
  const HandoverQuantiles quantiles(seed, inv_cell);
  for (double share : {0.1, 0.25, 0.5, 0.75, 0.9}) {
    const float threshold = quantiles.threshold(share);
    int below = 0, pixels = 0;
    // 1536^2 pixels hold 9000 cells or more: the share's spread is about 0.01.
    for (int y = 0; y < 1536; ++y)
      for (int x = 0; x < 1536; ++x, ++pixels) below += handover_noise(x + 0.5f, y + 0.5f, seed, inv_cell) < threshold;
    EXPECT_NEAR(double(below) / pixels, share, 0.05) << "cell " << 1 / inv_cell << " px";
  }
  EXPECT_EQ(quantiles.threshold(0), 0.f);
  EXPECT_EQ(quantiles.threshold(1), 1.f);
}

#if STYLEPIPE_HAS_CUDA
TEST(HalftoneSeamsCuda, TheWorkerBeforeASeamRunsTheNextWorkersStateAndHandsOverToIt) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 33);
  const auto clip = panning_clip(128, 96, 24, 1, rng);
  std::vector<float2> handed_over, started;
  // deterministic: the worker before the seam draws the single run's
  // pictures, to the pixel, up to its handover (the default's float atomics
  // sum in an order that changes from run to run, and a dot on its keep
  // threshold then parts the two: 69% of the pixels of a frame apart, seed
  // 80239863621 on an H200).
  const SeamRun run = run_at_seam(clip, 20, 0.6, Backend::cuda, &handed_over, &started, 0, true);
  ASSERT_FALSE(started.empty());
  EXPECT_EQ(handed_over.size(), started.size());
  EXPECT_EQ(same_dots(handed_over, started), started.size()) << "exact sums: the same dots to the bit";
  expect_handover(run, 20, 0.6);
}

// By default the handed-over state still repeats to the bit (its sums are
// exact); the frames before it are the single run's but for float order.
TEST(HalftoneSeamsCuda, TheDefaultHandsOverTheSameDots) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 36);
  const auto clip = panning_clip(128, 96, 24, 1, rng);
  std::vector<float2> handed_over, started;
  run_at_seam(clip, 20, 0.6, Backend::cuda, &handed_over, &started);
  ASSERT_FALSE(started.empty());
  EXPECT_EQ(handed_over.size(), started.size());
  EXPECT_EQ(same_dots(handed_over, started), started.size()) << "exact sums: the same dots to the bit";
}

TEST(HalftoneSeamsCuda, HeldDotsHandOverToTheNextWorkersPicture) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 35);
  const auto clip = panning_clip(128, 96, 24, 1, rng);
  const SeamRun run = run_at_seam(clip, 20, 0.6, Backend::cuda, nullptr, nullptr, 0.3, true);
  expect_handover(run, 20, 0.6);
}
#endif

}  // namespace
}  // namespace sp::halftone
