// choose_segments on synthetic keyframe scans: worked examples, then random
// scans and requests against the invariants and a brute-force nearest search.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <random>

extern "C" {
#include <libavutil/mathematics.h>
}

#include "orchestration/keyframes.h"
#include "orchestration/synthetic_scan_test_util.h"
#include "pipeline/errors.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

std::vector<double> begin_seconds(const std::vector<SegmentPlan>& plans) {
  std::vector<double> out;
  for (const SegmentPlan& p : plans) out.push_back(p.begin_seconds);
  return out;
}

TEST(PlanSegments, EqualSharesCutAtTheNearestKeyframes) {
  const SyntheticScan s = regular_scan(1000, 50, true);  // 40 s at 25 fps, a keyframe every 2 s
  const std::vector<SegmentPlan> plans = choose_segments(s.scan, 3, 0, 0);
  ASSERT_EQ(begin_seconds(plans), (std::vector<double>{0, 14, 26}));  // 13.3 s and 26.7 s asked
  EXPECT_EQ(plans[1].begin_pts, 14000);
  EXPECT_EQ(plans[1].seek_pts, 14000);
  EXPECT_EQ(plans[0].end_seconds, 14);
  EXPECT_EQ(plans[2].end_seconds, -1);
  EXPECT_EQ(plans[2].file, "segment_0002.nut");
}

TEST(PlanSegments, SegmentSecondsCutNearMultiplesAndTiesGoEarlier) {
  const SyntheticScan s = regular_scan(500, 50, true);  // 20 s
  EXPECT_EQ(begin_seconds(choose_segments(s.scan, 0, 5, 0)), (std::vector<double>{0, 4, 10, 14}));
}

TEST(PlanSegments, OneKeyframeIsOneSegment) {
  const SyntheticScan s = regular_scan(300, 1000, true);
  const std::vector<SegmentPlan> plans = choose_segments(s.scan, 8, 0, 10);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_FALSE(plans[0].begin_pts || plans[0].end_pts || plans[0].seek_pts);
  EXPECT_EQ(choose_segments(s.scan, 0, 0.5, 0).size(), 1u);
}

TEST(PlanSegments, MoreSegmentsThanKeyframesUseEachKeyframeOnce) {
  const SyntheticScan s = regular_scan(250, 25, false);
  for (const int asked : {10, 11, 31, 1000000}) EXPECT_EQ(choose_segments(s.scan, asked, 0, 0).size(), 10u) << asked;
  EXPECT_EQ(choose_segments(s.scan, 0, 1e-9, 0).size(), 10u);
}

TEST(PlanSegments, StepsShorterThanTheGopsReachEveryKeyframe) {
  const SyntheticScan s = regular_scan(250, 25, true);  // a keyframe every second
  EXPECT_EQ(begin_seconds(choose_segments(s.scan, 0, 0.9, 0)), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(PlanSegments, ClipShorterThanOneSegment) {
  const SyntheticScan s = regular_scan(75, 10, true);  // 3 s
  EXPECT_EQ(choose_segments(s.scan, 0, 10, 0).size(), 1u);
  EXPECT_EQ(choose_segments(s.scan, 0, 3, 0).size(), 1u);  // a cut at the very end would be no segment
}

TEST(PlanSegments, AMultipleAtTheEndButForRoundingIsTheEnd) {
  // 4.2 s / 0.6 s is 7.000000000000001: no eighth segment of one GOP (frames 100-104).
  const SyntheticScan a = regular_scan(105, 5, true);
  EXPECT_EQ(choose_segments(a.scan, 0, 0.6, 0).size(), 7u);
  EXPECT_EQ(choose_segments(a.scan, 0, 0.6 - 1e-3, 0).size(), 8u) << "a multiple a frame's share before the end cuts";
  // 3 * 36.4 s < 109.2 s (SP_TEST_SEED=18909936217310): no fourth segment of one frame (frame 2729).
  std::vector<int64_t> keys;
  for (int64_t f = 0; f < 2729; f += 7) keys.push_back(f);
  keys.push_back(2729);
  const SyntheticScan b = make_scan(kClocks[0], 2730, keys, false, 64525);
  const std::vector<SegmentPlan> plans = choose_segments(b.scan, 0, 36.4, 0);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[1].begin_pts, 64525 + 36400);
  EXPECT_EQ(plans[2].begin_pts, 64525 + 72800);
}

TEST(PlanSegments, WarmupSeeksBackFarEnough) {
  for (const bool counts_known : {true, false}) {
    const SyntheticScan s = regular_scan(400, 10, counts_known);
    const auto second_segment = [&](int warmup) {
      const std::vector<SegmentPlan> plans = choose_segments(s.scan, 2, 0, warmup);
      EXPECT_EQ(plans.size(), 2u);
      return plans.size() == 2 ? plans[1] : SegmentPlan{};
    };
    EXPECT_EQ(second_segment(15).begin_pts, 8000);  // frame 200
    EXPECT_EQ(second_segment(15).seek_pts, 7200) << "frame 180: 20 frames of warm-up; frame 190 gives only 10";
    EXPECT_EQ(second_segment(10).seek_pts, 7600);
    EXPECT_EQ(second_segment(0).seek_pts, 8000);
    EXPECT_EQ(second_segment(100000).seek_pts, 0) << "not enough anywhere: the first keyframe";
  }
}

TEST(PlanSegments, AskingForBothOrNeitherIsAUsageError) {
  const SyntheticScan s = regular_scan(100, 10, true);
  for (const auto& [segments, seconds] : std::vector<std::pair<int, double>>{{0, 0}, {2, 3}, {-1, 0}, {0, NAN}}) {
    try {
      choose_segments(s.scan, segments, seconds, 0);
      ADD_FAILURE() << segments << ", " << seconds << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
    }
  }
}

// The cuts a plan must have: for every target time the nearest keyframe but
// the first (the earlier on a tie), each once.
std::vector<int64_t> brute_force_cuts(const KeyframeScan& scan, const std::vector<double>& targets) {
  std::vector<int64_t> cuts;
  const double tick = av_q2d(scan.time_base);
  for (const double t : targets) {
    size_t best = 0;
    for (size_t j = 1; j < scan.keyframes.size(); ++j)
      if (best == 0 ||
          std::abs(t - double(scan.keyframes[j].pts) * tick) < std::abs(t - double(scan.keyframes[best].pts) * tick))
        best = j;
    if (best > 0 && (cuts.empty() || scan.keyframes[best].pts != cuts.back())) cuts.push_back(scan.keyframes[best].pts);
  }
  return cuts;
}

void expect_valid_plan(const SyntheticScan& s, const std::vector<SegmentPlan>& plans, int warmup,
                       const std::vector<double>& targets) {
  const KeyframeScan& scan = s.scan;
  std::map<int64_t, size_t> keyframe_at;
  for (size_t i = 0; i < scan.keyframes.size(); ++i) keyframe_at[scan.keyframes[i].pts] = i;
  ASSERT_FALSE(plans.empty());
  EXPECT_FALSE(plans.front().begin_pts || plans.front().seek_pts);
  EXPECT_EQ(plans.front().begin_seconds, 0);
  EXPECT_FALSE(plans.back().end_pts);
  EXPECT_LT(plans.back().end_seconds, 0);
  std::vector<int64_t> cuts;
  for (size_t i = 0; i < plans.size(); ++i) {
    const SegmentPlan& p = plans[i];
    EXPECT_EQ(p.index, int(i));
    EXPECT_EQ(p.file, fmt::format("segment_{:04d}.nut", i));
    if (i + 1 < plans.size()) {
      ASSERT_TRUE(p.end_pts && plans[i + 1].begin_pts) << "segment " << i << " leaves a gap";
      EXPECT_EQ(*p.end_pts, *plans[i + 1].begin_pts);
      EXPECT_DOUBLE_EQ(p.end_seconds, plans[i + 1].begin_seconds);
    }
    if (i == 0) continue;
    const int64_t begin = *p.begin_pts;
    cuts.push_back(begin);
    ASSERT_TRUE(keyframe_at.count(begin)) << begin << " is not a keyframe";
    const size_t b = keyframe_at[begin];
    EXPECT_GT(b, 0u) << "the first keyframe cut";
    if (i > 1) {
      EXPECT_GT(begin, *plans[i - 1].begin_pts);
    }
    EXPECT_NEAR(p.begin_seconds, double(begin) * av_q2d(scan.time_base) - scan.start_seconds, 1e-9);
    ASSERT_TRUE(p.seek_pts && keyframe_at.count(*p.seek_pts)) << "segment " << i << " seeks off a keyframe";
    const size_t k = keyframe_at[*p.seek_pts];
    ASSERT_LE(k, b);
    const auto frames_between = [&](size_t from) { return s.keyframe_frames[b] - s.keyframe_frames[from]; };
    EXPECT_TRUE(k == 0 || frames_between(k) >= warmup) << "segment " << i << " gets too little warm-up";
    EXPECT_TRUE(k == b || frames_between(k + 1) < warmup) << "segment " << i << " seeks back further than needed";
  }
  EXPECT_EQ(cuts, brute_force_cuts(scan, targets));
}

TEST(PlanSegments, RandomScansAndRequestsKeepTheInvariants) {
  std::mt19937_64 rng(fresh_seed());
  for (int round = 0; round < 300; ++round) {
    const Clock& clock = kClocks[rng() % std::size(kClocks)];
    const int64_t frames = 1 + int64_t(rng() % 3000);
    const int64_t max_gap = 1 + int64_t(rng() % 200);
    std::vector<int64_t> keys{int64_t(rng() % 3)};  // a stream may begin before its first keyframe
    while (keys.back() + 1 < frames) keys.push_back(std::min(frames - 1, keys.back() + 1 + int64_t(rng() % max_gap)));
    if (keys.back() >= frames) keys.pop_back();
    const SyntheticScan s = make_scan(clock, frames, keys, rng() % 2, int64_t(rng() % 100000));
    const double span = s.scan.duration_seconds;
    const int warmup = rng() % 3 ? int(rng() % 120) : 0;
    std::vector<double> targets;
    std::vector<SegmentPlan> plans;
    if (rng() % 2) {
      const int segments = 1 + int(rng() % 60);
      for (int k = 1; k < segments; ++k) targets.push_back(s.scan.start_seconds + k * (span / segments));
      plans = choose_segments(s.scan, segments, 0, warmup);
      EXPECT_LE(plans.size(), size_t(segments));
    } else {
      const double seconds = 0.05 + double(rng() % 100000) / 1000;
      // The multiples of `seconds` more than a microsecond before the end: one
      // at the end but for rounding is no target (see kCutTargetEndMargin).
      for (int k = 1; span - k * seconds > 1e-6; ++k) targets.push_back(s.scan.start_seconds + k * seconds);
      plans = choose_segments(s.scan, 0, seconds, warmup);
    }
    SCOPED_TRACE(fmt::format("round {}: {} frames, {} keyframes, {} targets, warm-up {}, counts {}", round, frames,
                             keys.size(), targets.size(), warmup, s.scan.frame_count >= 0 ? "known" : "unknown"));
    EXPECT_LE(plans.size(), std::max<size_t>(1, keys.size()));
    expect_valid_plan(s, plans, warmup, targets);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace sp::test
