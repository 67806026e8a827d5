// A segment-parallel run of an MPEG-TS whose 33-bit clock wraps within the
// file against a single run of the same chain, with ffprobe as the oracle.
// FFmpeg unwraps the clock, so the frames before the wrap have negative
// times: the segments must keep them as they are for the concat.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <optional>
#include <random>

#include "orchestration/keyframe_clips_test_util.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
using namespace keyframe_clips;
namespace {

// 2^33 ticks of 90 kHz, where the clock wraps; MPEG-TS starts at 1.4 s.
constexpr double kWrapSeconds = 8589934592.0 / 90000;
constexpr double kTransportStreamStart = 1.4;

TEST(ClockWrapE2E, SegmentedTransportStreamRunEqualsSingleRun) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  ClipSpec spec = random_three_segment_spec(rng);
  // The wrap at least a second from either end, in any segment.
  const double wrap_at = 1 + double(rng() % int((spec.seconds - 2) * 100)) / 100;
  const double offset = kWrapSeconds - kTransportStreamStart - wrap_at;
  spec.extra = fmt::format("-output_ts_offset {:.3f}", offset);
  // The plan from the full scan or from keyframes sampled around the cuts.
  const bool sampled = rng() % 2;
  SCOPED_TRACE(fmt::format("{} s, GOP {}, {} B-frames, open GOP {}, clock wraps at {:.2f} s, {} plan", spec.seconds,
                           spec.gop, spec.bframes, spec.open_gop, wrap_at, sampled ? "sampled" : "full-scan"));
  const std::string in = make_clip(dir, "in.ts", spec);
  const std::string config = source_dir() + "/configs/pencil.yaml";
  const std::string single = dir.file("single.mkv"), split = dir.file("split.mkv");
  const auto run = [&](const std::string& out, const std::string& flags) {
    return stylepipe("run " + config + " -i " + shell_quote(in) + " -o " + shell_quote(out) +
                     " --backend cpu --codec ffv1 " + flags);
  };
  CommandResult r = run(single, "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::optional<ScopedEnv> sample;
  if (sampled) sample.emplace("SP_SAMPLED_SCAN_MIN_BYTES", "0");
  r = run(split, "--jobs 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // The single run keeps the times continuous across the wrap.
  const std::vector<double> single_times = video_frame_times(single);
  ASSERT_EQ(single_times.size(), probe_video_packets(in).size());
  for (size_t i = 1; i < single_times.size(); ++i)
    ASSERT_NEAR(single_times[i] - single_times[i - 1], 1.0 / spec.rate, 1e-3) << "frame " << i;
  const std::vector<double> times = video_frame_times(split);
  ASSERT_EQ(times.size(), single_times.size());
  for (size_t i = 0; i < times.size(); ++i) ASSERT_NEAR(times[i], single_times[i], 1e-4) << "frame " << i;
}

}  // namespace
}  // namespace sp::test
