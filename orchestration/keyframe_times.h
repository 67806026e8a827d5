#pragma once
// A keyframe scan's keyframes as times and frame counts, for the choosers of
// cuts (segment_choice.cpp, segment_stagger.cpp).
#include <algorithm>
#include <cmath>
#include <optional>

#include "orchestration/keyframes.h"

namespace sp {

// Where a segment begins: at begin_pts, decoded from the keyframe at
// seek_pts; begin_seconds is absolute (the file's start not taken off).
struct SegmentCut {
  int64_t begin_pts = 0, seek_pts = 0;
  double begin_seconds = 0;
};

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

  // The last keyframe at or before `t`; nullopt where the first is after it.
  std::optional<size_t> last_at_or_before(double t) const {
    auto later = std::partition_point(scan_.keyframes.begin(), scan_.keyframes.end(),
                                      [&](const Keyframe& k) { return double(k.pts) * seconds_per_tick_ <= t; });
    if (later == scan_.keyframes.begin()) return std::nullopt;
    return size_t(later - scan_.keyframes.begin()) - 1;
  }

  const KeyframeScan& scan() const { return scan_; }

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

  // A cut at keyframe j, decoded from where `warmup` frames before it start.
  SegmentCut cut_at(size_t j, int warmup) const { return {pts(j), pts(warmup_start(j, warmup)), seconds(j)}; }

 private:
  const KeyframeScan& scan_;
  double seconds_per_tick_;
};

// The plans of the segments these cuts (increasing) make: segment 0 from the
// start, the last to the end, begin/end_seconds counted from start_seconds.
std::vector<SegmentPlan> plans_from_cuts(const std::vector<SegmentCut>& cuts, double start_seconds);

}  // namespace sp
