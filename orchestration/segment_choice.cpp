// choose_segments (declared in keyframes.h): where to cut, from a keyframe scan.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "orchestration/keyframes.h"
#include "pipeline/errors.h"

namespace sp {
namespace {

class KeyframeTimes {
 public:
  explicit KeyframeTimes(const KeyframeScan& scan) : scan_(scan), seconds_per_tick_(av_q2d(scan.time_base)) {}

  size_t size() const { return scan_.keyframes.size(); }
  int64_t pts(size_t i) const { return scan_.keyframes[i].pts; }
  double seconds(size_t i) const { return double(pts(i)) * seconds_per_tick_; }

  // The keyframe after the first whose time is nearest `t` (the earlier on a
  // tie): the first keyframe starts segment 0, never another.
  size_t nearest_after_first(double t) const {
    auto later = std::partition_point(scan_.keyframes.begin() + 1, scan_.keyframes.end(),
                                      [&](const Keyframe& k) { return double(k.pts) * seconds_per_tick_ < t; });
    const size_t j = size_t(later - scan_.keyframes.begin());
    if (j == size()) return j - 1;
    if (j > 1 && t - seconds(j - 1) <= seconds(j) - t) return j - 1;
    return j;
  }

  // Frames decoded from keyframe `from` up to keyframe `to`: counted where
  // the scan counted them, else estimated at the average frame rate, rounded
  // down (where the rate varies, a stretch slower than the average holds
  // fewer frames than estimated).
  int64_t frames_between(size_t from, size_t to) const {
    const Keyframe& a = scan_.keyframes[from];
    const Keyframe& b = scan_.keyframes[to];
    if (a.frames_before >= 0 && b.frames_before >= 0) return b.frames_before - a.frames_before;
    return int64_t(std::floor((seconds(to) - seconds(from)) * av_q2d(scan_.frame_rate) + 1e-6));
  }

  // The latest keyframe at or before `begin` that leaves `warmup` frames
  // before it, or the first keyframe where none does.
  size_t warmup_start(size_t begin, int warmup) const {
    size_t lo = 0, hi = begin + 1;  // frames_between(j, begin) falls as j rises: the last j that has enough
    while (lo + 1 < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (frames_between(mid, begin) >= warmup)
        lo = mid;
      else
        hi = mid;
    }
    return lo;
  }

 private:
  const KeyframeScan& scan_;
  double seconds_per_tick_;
};

// Keyframes (indices into the scan) that begin segments 1, 2, ...: the
// nearest to each target time, each used once. Targets that would pick the
// keyframe already picked are skipped in one step, so a tiny step or a huge
// count costs no more than the keyframes do.
std::vector<size_t> choose_cuts(const KeyframeTimes& keyframes, const CutTargets& targets) {
  const double start = targets.start, step = targets.step;
  std::vector<size_t> cuts;
  if (keyframes.size() < 2 || !(step > 0)) return cuts;
  for (double k = 1; k <= targets.last_k;) {
    const size_t j = keyframes.nearest_after_first(start + k * step);
    if (cuts.empty() || j > cuts.back()) cuts.push_back(j);
    if (j + 1 == keyframes.size()) break;
    const double midway = (keyframes.seconds(j) + keyframes.seconds(j + 1)) / 2;  // targets beyond pick j + 1
    double next = std::max(k + 1, std::floor((midway - start) / step) + 1);
    // The midway is where the exact nearest changes; the rounded comparison
    // in nearest_after_first may change a target earlier. Never skip one that
    // it sends past j (SP_TEST_SEED=4474397615067 lost a cut so).
    while (next - 1 > k && keyframes.nearest_after_first(start + (next - 1) * step) > j) --next;
    k = next;
  }
  return cuts;
}

}  // namespace

CutTargets cut_targets(const KeyframeScan& scan, int segments, double segment_seconds) {
  if ((segments > 0) == (segment_seconds > 0))
    throw Error(ExitCode::usage, "segments: give either a number of segments or a segment length in seconds");
  CutTargets targets;
  targets.start = scan.start_seconds;
  double span = scan.duration_seconds;
  if (!(span > 0) && !scan.keyframes.empty())
    span = double(scan.keyframes.back().pts) * av_q2d(scan.time_base) - targets.start;
  targets.step = segments > 0 ? span / segments : segment_seconds;
  // The multiples of segment_seconds before the end. One that is the end but
  // for rounding is the end: 4.2 s / 0.6 s gives 7.000000000000001 (a cut
  // near the end, a last segment of a frame or a GOP that nobody asked for),
  // 3 * 36.4 s < 109.2 s. Less than a microsecond (the resolution of a
  // container's duration, far above a double's rounding of times, far below
  // a frame) before the end counts as the end.
  targets.last_k = segments > 0 ? segments - 1 : std::ceil((span - kCutTargetEndMargin) / segment_seconds) - 1;
  return targets;
}

std::vector<SegmentPlan> choose_segments(const KeyframeScan& scan, int segments, double segment_seconds,
                                         int warmup_frames) {
  const CutTargets targets = cut_targets(scan, segments, segment_seconds);
  const KeyframeTimes keyframes(scan);
  const double start = targets.start;
  const std::vector<size_t> cuts = choose_cuts(keyframes, targets);

  std::vector<SegmentPlan> plans(cuts.size() + 1);
  for (size_t i = 0; i < plans.size(); ++i) {
    SegmentPlan& plan = plans[i];
    plan.index = int(i);
    plan.file = fmt::format("segment_{:04d}.{}", i, kSegmentFormat);
    if (i > 0) {
      const size_t begin = cuts[i - 1];
      plan.begin_pts = keyframes.pts(begin);
      plan.seek_pts = keyframes.pts(keyframes.warmup_start(begin, warmup_frames));
      plan.begin_seconds = keyframes.seconds(begin) - start;
    }
    if (i < cuts.size()) {
      plan.end_pts = keyframes.pts(cuts[i]);
      plan.end_seconds = keyframes.seconds(cuts[i]) - start;
    }
  }
  return plans;
}

}  // namespace sp
