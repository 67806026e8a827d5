// A segment-parallel run of an MPEG-TS input whose keyframes were sampled
// (forced on a small clip through SP_SAMPLED_SCAN_MIN_BYTES) against a single
// run of the same chain, with ffprobe as the oracle.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "orchestration/keyframe_clips_test_util.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
using namespace keyframe_clips;
namespace {

// Pencil's tone smoothing needs a warm-up, so the sampled scan also reads
// where each segment's warm-up begins.
TEST(SampledPlanE2E, TransportStreamRunEqualsSingleRun) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  ClipSpec spec = random_three_segment_spec(rng);
  // Later than MPEG-TS's 1.4 s. Across the 33-bit wrap:
  // ClockWrapE2E (ts_wrap_e2e_test.cpp).
  const double offset = double(rng() % 10000) / 100;
  spec.extra = fmt::format("-output_ts_offset {:.2f}", offset);
  SCOPED_TRACE(fmt::format("{} s, GOP {}, {} B-frames, open GOP {}, offset {:.2f}", spec.seconds, spec.gop,
                           spec.bframes, spec.open_gop, offset));
  const std::string in = make_clip(dir, "in.ts", spec);
  const std::string config = source_dir() + "/configs/pencil.yaml";
  const std::string single = dir.file("single.mkv"), split = dir.file("split.mkv"), work = dir.file("work");
  const auto run = [&](const std::string& out, const std::string& flags) {
    return stylepipe("run " + config + " -i " + shell_quote(in) + " -o " + shell_quote(out) +
                     " --backend cpu --codec ffv1 " + flags);
  };
  CommandResult r = run(single, "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const ScopedEnv sample("SP_SAMPLED_SCAN_MIN_BYTES", "0");
  r = run(split, "--jobs 3 --keep-segments --workdir " + shell_quote(work));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::ifstream manifest_file(work + "/manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(manifest_file, nullptr, false);
  ASSERT_FALSE(manifest.is_discarded());
  EXPECT_EQ(manifest["input"]["keyframe_source"], "sampled");
  EXPECT_GT(manifest["warmup_frames"].get<int>(), 0);
  EXPECT_EQ(manifest["segments"].size(), 3u) << "a GOP of " << spec.gop << " frames allows 3";
  const std::vector<double> times = video_frame_times(split);
  EXPECT_EQ(times.size(), probe_video_packets(in).size());
  ASSERT_EQ(times.size(), video_frame_times(single).size());
  const std::vector<double> single_times = video_frame_times(single);
  for (size_t i = 0; i < times.size(); ++i) ASSERT_NEAR(times[i], single_times[i], 1e-4) << "frame " << i;
}

}  // namespace
}  // namespace sp::test
