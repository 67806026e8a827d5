// choose_segments on scans of real clips, against ffprobe's packets.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>

#include "orchestration/keyframe_clips_test_util.h"
#include "orchestration/keyframes.h"

namespace sp::test {
// Fixture helpers of another test file may share names: each set has its own namespace.
using namespace keyframe_clips;
namespace {

// Plans for random requests on real clips, checked against ffprobe's packets:
// cuts and seeks at key packets, every segment holding frames, shares within
// a GOP of equal, and the warm-up counted in packets.
TEST(PlanSegments, RandomRequestsOnRealClips) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  const std::string containers[] = {"mp4", "mkv", "ts"};
  for (int round = 0; round < 3; ++round) {
    ClipSpec spec;
    spec.seconds = 4 + double(rng() % 60) / 10;
    spec.gop = 4 + int(rng() % 30);
    spec.bframes = int(rng() % 4);
    spec.open_gop = rng() % 2;
    const std::string ext = containers[rng() % std::size(containers)];
    const std::string file = make_clip(dir, fmt::format("plan{}.{}", round, ext), spec);
    const int segments = 1 + int(rng() % 10), warmup = rng() % 2 ? int(rng() % 60) : 0;
    SCOPED_TRACE(fmt::format("{}: GOP {}, {} B-frames, open GOP {}; {} segments, warm-up {}", file, spec.gop,
                             spec.bframes, spec.open_gop, segments, warmup));
    const std::vector<SegmentPlan> plans = choose_segments(scan_keyframes(file), segments, 0, warmup);
    const std::vector<ProbedPacket> packets = probe_video_packets(file);
    std::map<int64_t, int64_t> key_position;  // key packet pts -> decode-order position
    for (size_t i = 0; i < packets.size(); ++i)
      if (packets[i].key) key_position[packets[i].pts] = int64_t(i);
    ASSERT_FALSE(plans.empty());
    ASSERT_LE(plans.size(), size_t(segments));
    for (const SegmentPlan& p : plans) {
      const int64_t begin = p.begin_pts.value_or(INT64_MIN), end = p.end_pts.value_or(INT64_MAX);
      const auto frames = std::count_if(packets.begin(), packets.end(), [&](const ProbedPacket& f) {
        return !f.discard && f.pts >= begin && f.pts < end;
      });
      EXPECT_GT(frames, 0) << "segment " << p.index;
      // A cut lands within half a GOP of its target (give or take a frame:
      // targets count from the container's start and duration).
      if (plans.size() == size_t(segments)) {
        EXPECT_NEAR(double(frames), double(packets.size()) / segments, spec.gop + 2) << "segment " << p.index;
      }
      if (p.index == 0) continue;
      ASSERT_TRUE(key_position.count(begin)) << "segment " << p.index << " begins off a key packet";
      ASSERT_TRUE(p.seek_pts && key_position.count(*p.seek_pts)) << "segment " << p.index << " seeks off a key packet";
      // Warm-up is what the worker shows itself and drops: the frames from
      // the seek keyframe up to the segment's first, in presentation order.
      // Known limit: where the scan counted packets, it counts them in decode
      // order, and an open GOP moves up to B-frames-many frames across a
      // keyframe; there the count may be off by that much either way.
      const int64_t reorder = spec.open_gop ? spec.bframes : 0;
      const auto shown_between = [&](int64_t from, int64_t to) {
        return std::count_if(packets.begin(), packets.end(),
                             [&](const ProbedPacket& f) { return !f.discard && f.pts >= from && f.pts < to; });
      };
      const auto seek = key_position.find(*p.seek_pts);
      EXPECT_TRUE(seek == key_position.begin() || shown_between(*p.seek_pts, begin) >= warmup - reorder)
          << "segment " << p.index;
      // And no earlier than needed, give or take one frame more: an index
      // scan counts frames by time, rounded down, and Matroska's ms
      // timestamps can put a span just under its frame count.
      const auto later = std::next(seek);
      EXPECT_TRUE(*p.seek_pts == begin || shown_between(later->first, begin) < warmup + 1 + reorder)
          << "segment " << p.index;
    }
  }
}


}  // namespace
}  // namespace sp::test
