// Seams of segment-parallel runs on the CPU backend: each temporal stage's
// state across a seam (warm-up, refresh or handover), with ffmpeg decoding
// the joined video as the oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "pipeline/stage.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

std::string pencil_config() { return source_dir() + "/configs/pencil.yaml"; }

using GrayFrames = std::vector<std::vector<uint8_t>>;

GrayFrames gray_frames(const TempDir& dir, const std::string& video, int width, int height) {
  const std::string raw = dir.file("frames.gray");
  const CommandResult r = ffmpeg("-i " + shell_quote(video) + " -f rawvideo -pix_fmt gray " + shell_quote(raw));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(raw, std::ios::binary);
  GrayFrames frames;
  for (std::vector<uint8_t> f(size_t(width) * height); in.read(reinterpret_cast<char*>(f.data()), std::streamsize(f.size()));)
    frames.push_back(f);
  return frames;
}

// Mean absolute difference of two pictures, in gray levels.
double mean_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::abs(int(a[i]) - int(b[i]));
  return sum / double(a.size());
}

// For each picture of `video`, whether a segment of the plan begins at it:
// the first picture at or after the segment's begin (a keyframe's time, or a
// time between two pictures).
std::vector<bool> seam_frames(const std::string& video, const nlohmann::json& manifest) {
  const auto times = video_frame_times(video);
  const double tb = manifest["input"]["time_base"][0].get<double>() / manifest["input"]["time_base"][1].get<double>();
  std::vector<bool> seam(times.size(), false);
  for (const auto& s : manifest["segments"]) {
    if (s["begin_pts"].is_null()) continue;
    const double begin = s["begin_pts"].get<double>() * tb - 1e-4;
    for (size_t i = 0; i < times.size(); ++i)
      if (times[i] >= begin && (i == 0 || times[i - 1] < begin)) seam[i] = true;
  }
  return seam;
}

// A `--jobs 2 --segments 4` run (or split_flags) of `config` on a clip of
// width x height (and, with_single, a single run), losslessly (ffv1), decoded
// to gray.
struct SplitRun {
  CommandResult result;  // of the split run
  nlohmann::json manifest;
  GrayFrames split, single;
  std::vector<bool> at_seam;  // per frame of the split run
};

SplitRun split_and_single(const TempDir& dir, const std::string& config, const std::string& in, int width,
                          int height, bool with_single = true, const std::string& split_flags = "--jobs 2 --segments 4") {
  SplitRun run;
  const std::string single = dir.file("single.mkv"), split = dir.file("split.mkv"), work = dir.file("work");
  const CommandResult r = with_single ? stylepipe(run_parallel_cmd(config, in, single, "--codec ffv1")) : CommandResult{0, ""};
  EXPECT_EQ(r.exit_code, 0) << r.output;
  run.result = stylepipe(run_parallel_cmd(config, in, split, "--codec ffv1 " + split_flags + " --keep-segments --workdir " + work));
  EXPECT_EQ(run.result.exit_code, 0) << run.result.output;
  if (r.exit_code != 0 || run.result.exit_code != 0) return run;
  run.manifest = read_json(work + "/manifest.json");
  run.split = gray_frames(dir, split, width, height);
  if (with_single) run.single = gray_frames(dir, single, width, height);
  run.at_seam = seam_frames(split, run.manifest);
  return run;
}

// Pencil's smoothed tone histogram carries over frames: each segment warms it
// up on the frames before its start, so its frames are the single run's, and a
// seam changes no more than the same frame step does in the single run.
TEST(SegmentsE2E, TemporalSeamIsNoLargerThanChangesWithinSegments) {
  if (!StageRegistry::instance().find("pencil"))
    GTEST_SKIP() << "this build leaves the pencil stage out (STYLEPIPE_EXCLUDE_STAGES, as the TSan build does)";
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = dir.file("in.mkv");
  // Slow motion with a brightness drift, so the histogram keeps moving.
  CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=128x96:rate=25:duration=8 -vf \"eq=brightness='0.2*sin(t*" +
                           std::to_string(0.5 + (rng() % 100) / 100.0) + ")':eval=frame\" -c:v libx264 -g 20 "
                           "-pix_fmt yuv420p " + in);
  if (r.exit_code != 0 && r.output.find("No such filter: 'eq'") != std::string::npos)
    GTEST_SKIP() << "this FFmpeg has no eq filter to make the drifting clip (the GPU machine's static kit)";
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const SplitRun run = split_and_single(dir, pencil_config(), in, 128, 96);
  const nlohmann::json& manifest = run.manifest;
  const GrayFrames &split_frames = run.split, &single_frames = run.single;
  ASSERT_EQ(split_frames.size(), 200u);
  ASSERT_EQ(single_frames.size(), 200u);
  ASSERT_GT(manifest["warmup_frames"].get<int>(), 10) << "temporal_smoothing 0.8 needs a warm-up";
  const std::vector<bool>& at_seams = run.at_seam;
  double worst_seam_excess = -1e9, largest_deviation = 0, seam_sum = 0, within_sum = 0;
  int seams = 0;
  for (size_t i = 1; i < split_frames.size(); ++i) {
    largest_deviation = std::max(largest_deviation, mean_difference(split_frames[i], single_frames[i]));
    const double change = mean_difference(split_frames[i], split_frames[i - 1]);
    if (!at_seams[i]) {
      within_sum += change;
      continue;
    }
    ++seams;
    seam_sum += change;
    worst_seam_excess = std::max(worst_seam_excess, change - mean_difference(single_frames[i], single_frames[i - 1]));
  }
  ASSERT_EQ(seams, int(manifest["segments"].size()) - 1);
  std::printf("seams: mean change %.3f gray levels (the single run's steps there differ by at most %+.3f); "
              "within segments: mean %.3f; largest deviation from the single run %.3f\n",
              seam_sum / seams, worst_seam_excess, within_sum / (split_frames.size() - 1 - seams), largest_deviation);
  EXPECT_LT(worst_seam_excess, 0.25) << "a seam changes more than the single run's step at the same frame";
  EXPECT_LT(largest_deviation, 0.25) << "warmed-up segments should give the single run's frames";
}

// lowpoly's temporal mode keeps a tile's vertices until its edges change,
// and re-samples each tile once per refresh_seconds: a segment's warm-up of
// one period rebuilds the single run's vertices, so the joined video is the
// single run's, picture for picture (seams included).
TEST(SegmentsE2E, LowpolyTemporalSegmentsEqualTheSingleRun) {
  if (!StageRegistry::instance().find("lowpoly"))
    GTEST_SKIP() << "this build leaves the lowpoly stage out (STYLEPIPE_EXCLUDE_STAGES, as the TSan build does)";
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = dir.file("in.mkv"), config = dir.file("lowpoly.yaml");
  CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=128x96:rate=25:duration=6 -c:v libx264 -g 25 -pix_fmt yuv420p " + in);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double refresh = 0.3 + 0.1 * double(rng() % 4);
  std::ofstream(config) << "pipeline:\n  - lowpoly: {temporal: true, refresh_seconds: " << refresh << "}\n";
  const std::string single = dir.file("single.mkv"), split = dir.file("split.mkv"), work = dir.file("work");
  r = stylepipe(run_parallel_cmd(config, in, single, "--codec ffv1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int segments = 3 + int(rng() % 3);
  r = stylepipe(run_parallel_cmd(config, in, split, "--codec ffv1 --jobs 2 --keep-segments --workdir " + work +
                                                        " --segments " + std::to_string(segments)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("seam"), std::string::npos) << "no state is lost at the seams: " << r.output;
  const nlohmann::json manifest = read_json(work + "/manifest.json");
  EXPECT_GE(manifest["warmup_frames"].get<int>(), int(std::ceil(refresh * 25))) << "a refresh period of warm-up";
  ASSERT_GE(manifest["segments"].size(), 3u);
  EXPECT_EQ(decoded_video_frames(split), 150);
  EXPECT_EQ(video_md5s(split), video_md5s(single)) << "refresh " << refresh << " s, " << manifest["segments"].size() << " segments";
}

// Halftone's dots are chaotic: no warm-up leads back to the arrangement the
// worker before a seam reached, so without a handover a seam swaps every dot
// (on this clip a step of 63 levels, against 20-25 between frames). With it,
// the worker before the seam hands its picture over to the next worker's
// state during seam_seconds: the seam is a step of one state, drawn from the
// same spread as the steps within segments. Returns the run's manifest.
nlohmann::json expect_halftone_seams_like_steps_within(int seconds, int gop, const std::string& split_flags,
                                                       const std::string& container = "mkv") {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = dir.file("in." + container), config = dir.file("halftone.yaml");
  CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=96x72:rate=25:duration=" + std::to_string(seconds) +
                           " -vf hue=h=" + std::to_string(rng() % 360) + " -c:v libx264 -g " + std::to_string(gop) +
                           " -pix_fmt yuv420p " + in);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ofstream(config) << "pipeline:\n  - halftone: {iterations: 20, video_iterations: 6, seed: " << rng() % 1000
                        << "}\n";
  const SplitRun run = split_and_single(dir, config, in, 96, 72, false, split_flags);
  EXPECT_EQ(run.split.size(), size_t(25 * seconds));
  EXPECT_EQ(run.result.output.find("restarts at"), std::string::npos)
      << "the dots are handed over, not restarted: " << run.result.output;
  EXPECT_GE(run.manifest["warmup_frames"].get<int>(), 13) << "seam_seconds 0.5 at 25 fps, and the cold start";
  std::vector<double> within, seams;
  for (size_t i = 1; i < run.split.size(); ++i)
    (run.at_seam[i] ? seams : within).push_back(mean_difference(run.split[i], run.split[i - 1]));
  EXPECT_EQ(seams.size(), run.manifest["segments"].size() - 1);
  if (seams.empty() || within.size() < 2) return run.manifest;
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / double(v.size());
  };
  const double within_mean = mean(within), seam_mean = mean(seams);
  double variance = 0;
  for (double x : within) variance += (x - within_mean) * (x - within_mean) / double(within.size() - 1);
  // The mean of this many steps drawn from within segments stays below this
  // but for one run in ~300,000 (4.5 standard errors; at 3 it failed one run
  // in ~700). A seam without the handover (63 levels here) stays far above it.
  const double bound = within_mean + 4.5 * std::sqrt(variance / double(seams.size()));
  std::printf("halftone seams: mean step %.1f gray levels; within segments %.1f (sd %.1f); bound %.1f\n", seam_mean,
              within_mean, std::sqrt(variance), bound);
  EXPECT_LT(seam_mean, bound);
  return run.manifest;
}

TEST(SegmentsE2E, HalftoneSeamIsNoLargerThanChangesWithinSegments) {
  if (!StageRegistry::instance().find("halftone"))
    GTEST_SKIP() << "this build leaves the halftone stage out (STYLEPIPE_EXCLUDE_STAGES)";
  expect_halftone_seams_like_steps_within(3, 8, "--jobs 2 --segments 4");
}

// A --jobs run that picks its own segments cuts between keyframes (of an MP4,
// whose index counts frames), at 0.91 and 1.91 thirds of 7 s (its last round
// grows by 9% of a mean segment a step): the handover starts by time, so it
// hands over there too.
TEST(SegmentsE2E, HalftoneSeamBetweenKeyframesIsNoLargerThanChangesWithinSegments) {
  if (!StageRegistry::instance().find("halftone"))
    GTEST_SKIP() << "this build leaves the halftone stage out (STYLEPIPE_EXCLUDE_STAGES)";
  const nlohmann::json manifest = expect_halftone_seams_like_steps_within(7, 40, "--jobs 3", "mp4");
  ASSERT_EQ(manifest["segments"].size(), 3u);
  EXPECT_NEAR(manifest["segments"][1]["begin_seconds"].get<double>(), 7 * 0.91 / 3, 0.04) << "not the 1.6 s keyframe";
  EXPECT_NEAR(manifest["segments"][2]["begin_seconds"].get<double>(), 7 * 1.91 / 3, 0.04) << "not the 4.8 s keyframe";
}

}  // namespace
}  // namespace sp::test
