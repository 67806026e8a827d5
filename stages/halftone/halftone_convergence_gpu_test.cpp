// CUDA: warm frames decide on the device whether to iterate again (a graph's
// while loop). The limits are exact; in between, the CPU is the oracle.
#include <gtest/gtest.h>

#include <random>

#include "stages/halftone/halftone_test_util.h"

namespace sp::halftone {
namespace {

// deterministic: two runs compared here sum in the same order. With the
// default's float atomics a dot on its keep threshold went either way between
// runs, and the arrangements parted (FramesStopInsideAFarFieldCycle, seed
// 79825730463 on an H200: 1,435 of 1,448 dots apart).
Params video_params(int video_iterations, double tolerance, int far_field_every = 1) {
  Params p = halftone_default_params();
  p.set("deterministic", true);
  p.set("iterations", int64_t(12));
  p.set("video_iterations", int64_t(video_iterations));
  p.set("video_tolerance", tolerance);
  p.set("far_field_every", int64_t(far_field_every));
  return p;
}

// Runs the clip; returns the last frame's dots and the stage's counters.
std::pair<std::vector<float2>, StageCounters> run_gpu(const Params& p, const std::vector<test::HostImage>& clip) {
  HalftoneStage stage(parse_halftone_params(p));
  StageRunner runner(stage, clip[0].width, clip[0].height, Backend::cuda);
  for (size_t f = 0; f < clip.size(); ++f) runner.process(clip[f], int64_t(f));
  return {stage.particles(), stage.counters()};
}

// Tolerance 1 (a spacing): every warm frame stops after its first iteration,
// so the dots are those of video_iterations 1. Tolerance 0 runs every iteration.
TEST(HalftoneConvergenceCuda, TheLoopsLimitsAreExact) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 22);
  const auto clip = panning_clip(120, 90, 5, 2, rng);
  const auto [stopped, stopped_counters] = run_gpu(video_params(10, 1.0), clip);
  const auto [one, one_counters] = run_gpu(video_params(1, 0.0), clip);
  const auto [all, all_counters] = run_gpu(video_params(7, 0.0), clip);
  EXPECT_EQ(stopped_counters.at("iterations_warm_mean"), 1.0);
  EXPECT_EQ(stopped_counters.at("iterations_last"), 1.0);
  EXPECT_EQ(one_counters.at("iterations_warm_mean"), 1.0);
  EXPECT_EQ(all_counters.at("iterations_warm_mean"), 7.0);
  ASSERT_EQ(stopped.size(), one.size());
  EXPECT_LE(unmatched_dots(stopped, one), int(one.size() / 200));
  EXPECT_GT(unmatched_dots(all, one), int(one.size() / 10));  // more iterations moved the dots
}

// With far_field_every 3 the graph's body is a cycle of three iterations: a
// frame that stops inside a cycle (after its first, or at 7 of 9) moves no dot
// in the cycle's rest.
TEST(HalftoneConvergenceCuda, FramesStopInsideAFarFieldCycle) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 26);
  const auto clip = panning_clip(120, 90, 5, 2, rng);
  const auto [stopped, stopped_counters] = run_gpu(video_params(10, 1.0, 3), clip);
  const auto [one, one_counters] = run_gpu(video_params(1, 0.0, 3), clip);
  const auto [seven, seven_counters] = run_gpu(video_params(7, 0.0, 3), clip);
  const auto [nine, nine_counters] = run_gpu(video_params(9, 0.0, 3), clip);
  EXPECT_EQ(stopped_counters.at("iterations_warm_mean"), 1.0);
  EXPECT_EQ(seven_counters.at("iterations_warm_mean"), 7.0);
  EXPECT_EQ(nine_counters.at("iterations_warm_mean"), 9.0);
  ASSERT_EQ(stopped.size(), one.size());
  EXPECT_LE(unmatched_dots(stopped, one), int(one.size() / 200));  // not three iterations
  EXPECT_GT(unmatched_dots(seven, nine), int(nine.size() / 10));   // not nine
}

// In between, the device stops where the CPU does, up to float round-off in
// the moves: mean iterations within one, and the same quality.
TEST(HalftoneConvergenceCuda, StopsWhereTheCpuStops) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 23);
  const auto clip = panning_clip(128, 96, 14, 1, rng);
  const ClipQuality cpu = run_clip(clip, 0.01, Backend::cpu), gpu = run_clip(clip, 0.01, Backend::cuda);
  std::printf("tolerance 0.01: iterations cpu %.2f gpu %.2f; blurred error cpu %.4f gpu %.4f\n", cpu.iterations,
              gpu.iterations, cpu.blurred_error, gpu.blurred_error);
  EXPECT_LT(gpu.iterations, 10.0);
  EXPECT_NEAR(gpu.iterations, cpu.iterations, 1.0);
  EXPECT_NEAR(gpu.blurred_error, cpu.blurred_error, 0.1 * cpu.blurred_error + 0.002);
}

// profile: true runs a warm frame's first iteration launch by launch and the
// rest in the graph: the same decisions, the same dots.
TEST(HalftoneConvergenceCuda, ProfiledFramesIterateAsMany) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 24);
  const auto clip = panning_clip(120, 90, 6, 1, rng);
  Params profiled = video_params(10, 0.01);
  profiled.set("profile", true);
  const auto [plain, plain_counters] = run_gpu(video_params(10, 0.01), clip);
  const auto [timed, timed_counters] = run_gpu(profiled, clip);
  // A decision at the tolerance's edge may flip with float round-off between
  // the two paths: at most one frame of the five.
  EXPECT_NEAR(timed_counters.at("iterations_warm_mean"), plain_counters.at("iterations_warm_mean"), 0.21);
  EXPECT_GT(timed_counters.at("ms_iteration"), 0.0);
  EXPECT_LE(unmatched_dots(timed, plain), int(plain.size() / 100));
}

}  // namespace
}  // namespace sp::halftone
