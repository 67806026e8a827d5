// choose_staggered_segments on synthetic keyframe scans: where the targets
// are (computed here from the rule, not the code), warm-up counted from the
// true frames, and random scans against the invariants.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <random>

#include "orchestration/keyframes.h"
#include "orchestration/synthetic_scan_test_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

// The rule as documented: equal shares, the last round's growing by 9% of a
// mean segment each (0.42 / (round - 1) where less), around the mean.
double last_round_step(int segments, int jobs) {
  const int last_round = std::min(segments, jobs);
  return last_round > 1 ? std::min(0.09, 0.42 / (last_round - 1)) : 0;
}

std::vector<double> target_seconds(const KeyframeScan& scan, int segments, int jobs) {
  const int last_round = std::min(segments, jobs);
  std::vector<double> targets;
  double before = 0;
  for (int k = 0; k + 1 < segments; ++k) {
    const int q = k - (segments - last_round);
    before += q < 0 ? 1.0 : 1 + last_round_step(segments, jobs) * (q - (last_round - 1) / 2.0);
    targets.push_back(scan.start_seconds + scan.duration_seconds * before / segments);
  }
  return targets;
}

double tick(const KeyframeScan& scan) { return av_q2d(scan.time_base); }

// The first frame (of a constant rate from start_pts) at or after pts.
int64_t frame_at_or_after(const Clock& clock, int64_t start_pts, int64_t pts) {
  int64_t f = av_rescale_q(pts - start_pts, clock.time_base, av_inv_q(clock.frame_rate));
  while (f > 0 && frame_pts(clock, start_pts, f - 1) >= pts) --f;
  while (frame_pts(clock, start_pts, f) < pts) ++f;
  return f;
}

struct Checked {
  int at_keyframes = 0, between = 0;
};

// What every staggered plan keeps, with the truth of a synthetic scan.
void expect_valid(const SyntheticScan& s, const Clock& clock, int64_t start_pts, const std::vector<SegmentPlan>& plans,
                  int warmup, Checked& checked) {
  const KeyframeScan& scan = s.scan;
  std::map<int64_t, size_t> keyframe_at;
  for (size_t i = 0; i < scan.keyframes.size(); ++i) keyframe_at[scan.keyframes[i].pts] = i;
  const int64_t frames = int64_t(std::llround(scan.duration_seconds * av_q2d(clock.frame_rate)));
  for (size_t i = 1; i < plans.size(); ++i) {
    const SegmentPlan& p = plans[i];
    EXPECT_EQ(plans[i - 1].end_pts, p.begin_pts);
    EXPECT_GT(*p.begin_pts, scan.keyframes.front().pts);
    if (i > 1) {
      EXPECT_GT(*p.begin_pts, *plans[i - 1].begin_pts);
    }
    EXPECT_NEAR(p.begin_seconds, double(*p.begin_pts) * tick(scan) - scan.start_seconds, 1e-9);
    const int64_t first = frame_at_or_after(clock, start_pts, *p.begin_pts);
    const int64_t next = i + 1 < plans.size() ? frame_at_or_after(clock, start_pts, *plans[i + 1].begin_pts) : frames;
    EXPECT_LT(first, next) << "segment " << i << " holds no frame";
    ASSERT_TRUE(p.seek_pts && keyframe_at.count(*p.seek_pts)) << "segment " << i << " seeks off a keyframe";
    const size_t k = keyframe_at[*p.seek_pts];
    EXPECT_LE(*p.seek_pts, *p.begin_pts);
    const auto lead = [&](size_t key) { return first - s.keyframe_frames[key]; };
    EXPECT_TRUE(k == 0 || lead(k) >= warmup) << "segment " << i << " gets " << lead(k) << " frames of warm-up";
    const bool next_keyframe_enough = k + 1 < scan.keyframes.size() && scan.keyframes[k + 1].pts <= *p.begin_pts &&
                                      lead(k + 1) >= warmup;
    EXPECT_FALSE(next_keyframe_enough) << "segment " << i << " seeks back further than needed";
    (keyframe_at.count(*p.begin_pts) ? checked.at_keyframes : checked.between)++;
  }
}

Checked expect_valid(const SyntheticScan& s, const Clock& clock, int64_t start_pts, const std::vector<SegmentPlan>& plans,
                     int warmup) {
  Checked checked;
  expect_valid(s, clock, start_pts, plans, warmup, checked);
  return checked;
}

TEST(StaggeredCuts, TheLastRoundGrowsByTheStepAndCutsFallOnTheTargets) {
  const SyntheticScan s = regular_scan(3000, 50, true);  // 120 s at 25 fps, a keyframe every 2 s
  for (const auto& [segments, jobs] : std::vector<std::pair<int, int>>{{8, 8}, {6, 2}, {4, 4}, {16, 16}}) {
    SCOPED_TRACE(fmt::format("{} segments, {} jobs", segments, jobs));
    const std::vector<SegmentPlan> plans = choose_staggered_segments(s.scan, segments, jobs, 0);
    ASSERT_EQ(plans.size(), size_t(segments));
    const std::vector<double> targets = target_seconds(s.scan, segments, jobs);
    const double mean = 120.0 / segments;
    for (size_t k = 0; k < targets.size(); ++k) {
      const double begin = double(*plans[k + 1].begin_pts) * tick(s.scan);
      const bool at_keyframe = *plans[k + 1].begin_pts % 2000 == 0;
      EXPECT_NEAR(begin, targets[k], at_keyframe ? 0.01 * mean : tick(s.scan)) << "cut " << k + 1;
    }
    const int last_round = std::min(segments, jobs);
    const auto length_of = [&](int q) {
      return (plans[q].end_seconds < 0 ? 120.0 : plans[q].end_seconds) - plans[q].begin_seconds;
    };
    for (int q = segments - last_round; q + 1 < segments; ++q) {
      const double before = length_of(q), length = length_of(q + 1);
      // Three cuts, each within 1% of a mean segment of its target.
      EXPECT_NEAR(length - before, last_round_step(segments, jobs) * mean, 0.04 * mean + 4 * tick(s.scan))
          << "segment " << q + 1;
    }
    expect_valid(s, kClocks[0], 0, plans, 0);
  }
}

TEST(StaggeredCuts, WarmupIsCountedToTheCutNotToItsKeyframe) {
  const SyntheticScan s = regular_scan(3000, 50, true);
  for (const int warmup : {1, 30, 60, 75, 200}) {
    SCOPED_TRACE(fmt::format("warm-up {}", warmup));
    const std::vector<SegmentPlan> plans = choose_staggered_segments(s.scan, 8, 8, warmup);
    EXPECT_GT(expect_valid(s, kClocks[0], 0, plans, warmup).between, 0);
  }
}

TEST(StaggeredCuts, KeyframesOnlyWhereFramesAreNotCountedOrSparse) {
  const SyntheticScan uncounted = regular_scan(3000, 50, false);
  const std::vector<SegmentPlan> plans = choose_staggered_segments(uncounted.scan, 8, 8, 0);
  EXPECT_EQ(expect_valid(uncounted, kClocks[0], 0, plans, 0).between, 0);
  EXPECT_EQ(plans.size(), 8u);

  // Keyframes every 50 frames, but one GOP of 100 s holds only 50 frames.
  SyntheticScan sparse = regular_scan(3000, 50, true);
  for (Keyframe& k : sparse.scan.keyframes)
    if (k.frames_before >= 100) k.pts += 98000;
  sparse.scan.duration_seconds += 98;
  for (const SegmentPlan& p : choose_staggered_segments(sparse.scan, 8, 8, 0)) {
    const double begin = p.begin_pts ? double(*p.begin_pts) * tick(sparse.scan) : 0;
    if (begin > 2 && begin < 100) ADD_FAILURE() << "a cut at " << begin << " s, inside the still stretch";
  }
}

TEST(StaggeredCuts, FallsBackToEqualSharesAtKeyframes) {
  SyntheticScan s = regular_scan(3000, 50, true);
  const auto same_as_equal_shares = [&](int segments, int jobs, const char* why) {
    const std::vector<SegmentPlan> staggered = choose_staggered_segments(s.scan, segments, jobs, 10);
    const std::vector<SegmentPlan> equal = choose_segments(s.scan, segments, 0, 10);
    ASSERT_EQ(staggered.size(), equal.size()) << why;
    for (size_t i = 0; i < equal.size(); ++i) {
      EXPECT_EQ(staggered[i].begin_pts, equal[i].begin_pts) << why;
      EXPECT_EQ(staggered[i].seek_pts, equal[i].seek_pts) << why;
    }
  };
  same_as_equal_shares(8, 1, "one worker");
  same_as_equal_shares(61, 61, "segments under 2 s");
  s.scan.source = "sampled";
  same_as_equal_shares(8, 8, "a sampled scan");
}

TEST(StaggeredCuts, RandomScansKeepTheInvariants) {
  std::mt19937_64 rng(fresh_seed());
  int between = 0;
  for (int round = 0; round < 300; ++round) {
    const Clock& clock = kClocks[rng() % std::size(kClocks)];
    const int64_t frames = 1 + int64_t(rng() % 20000);
    const int64_t max_gap = 1 + int64_t(rng() % 600);
    std::vector<int64_t> keys{int64_t(rng() % 3)};
    while (keys.back() + 1 < frames) keys.push_back(std::min(frames - 1, keys.back() + 1 + int64_t(rng() % max_gap)));
    if (keys.back() >= frames) keys.pop_back();
    const int64_t start_pts = int64_t(rng() % 100000);
    const SyntheticScan s = make_scan(clock, frames, keys, rng() % 4 != 0, start_pts);
    const int jobs = 1 + int(rng() % 16), segments = jobs * (1 + int(rng() % 4));
    const int warmup = rng() % 3 ? int(rng() % 120) : 0;
    SCOPED_TRACE(fmt::format("round {}: {} frames, {} keyframes, {} segments, {} jobs, warm-up {}", round, frames,
                             keys.size(), segments, jobs, warmup));
    const std::vector<SegmentPlan> plans = choose_staggered_segments(s.scan, segments, jobs, warmup);
    EXPECT_LE(plans.size(), size_t(segments));
    between += expect_valid(s, clock, start_pts, plans, warmup).between;
    if (HasFailure()) break;
  }
  EXPECT_GT(between, 0) << "no round cut between keyframes";
}

}  // namespace
}  // namespace sp::test
