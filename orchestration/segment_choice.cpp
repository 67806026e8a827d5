// choose_segments (declared in keyframes.h): where to cut, from a keyframe scan.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "orchestration/keyframe_times.h"
#include "orchestration/keyframes.h"
#include "pipeline/errors.h"

namespace sp {
namespace {

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

std::vector<SegmentPlan> plans_from_cuts(const std::vector<SegmentCut>& cuts, double start_seconds) {
  std::vector<SegmentPlan> plans(cuts.size() + 1);
  for (size_t i = 0; i < plans.size(); ++i) {
    SegmentPlan& plan = plans[i];
    plan.index = int(i);
    plan.file = fmt::format("segment_{:04d}.{}", i, kSegmentFormat);
    if (i > 0) {
      plan.begin_pts = cuts[i - 1].begin_pts;
      plan.seek_pts = cuts[i - 1].seek_pts;
      plan.begin_seconds = cuts[i - 1].begin_seconds - start_seconds;
    }
    if (i < cuts.size()) {
      plan.end_pts = cuts[i].begin_pts;
      plan.end_seconds = cuts[i].begin_seconds - start_seconds;
    }
  }
  return plans;
}

std::vector<SegmentPlan> choose_segments(const KeyframeScan& scan, int segments, double segment_seconds,
                                         int warmup_frames) {
  const CutTargets targets = cut_targets(scan, segments, segment_seconds);
  const KeyframeTimes keyframes(scan);
  std::vector<SegmentCut> cuts;
  for (const size_t j : choose_cuts(keyframes, targets)) cuts.push_back(keyframes.cut_at(j, warmup_frames));
  return plans_from_cuts(cuts, targets.start);
}

}  // namespace sp
