#include "orchestration/keyframe_sample.h"

#include "orchestration/keyframe_sampler.h"
#include "pipeline/log.h"

namespace sp {
namespace {

// More places than this cost about as much as reading every packet.
constexpr double kMaxPlaces = 2048;

}  // namespace

std::optional<std::vector<Keyframe>> sample_keyframes(VideoInput& in, const KeyframeScan& facts,
                                                      const CutRequest& request) {
  const CutTargets targets = cut_targets(facts, request.segments, request.segment_seconds);
  if (!(targets.last_k <= kMaxPlaces)) {
    log_debug("{}: {} places to cut near; reading every packet", in.path, targets.last_k);
    return std::nullopt;
  }
  try {
    KeyframeSampler sampler(in, facts.time_base);
    sampler.read_first_keyframe();
    for (double k = 1; k <= targets.last_k; ++k) {
      sampler.cover(targets.start + k * targets.step);
      sampler.check_pace(k, targets.last_k);
    }
    // Where each cut's warm-up begins, by time as the scan of some keyframes
    // estimates it: known only once the cuts are.
    if (request.warmup_frames > 0) {
      KeyframeScan near_cuts = facts;
      near_cuts.keyframes = sampler.keyframes();
      const double warmup_seconds = request.warmup_frames / av_q2d(facts.frame_rate);
      for (const SegmentPlan& plan : choose_segments(near_cuts, request.segments, request.segment_seconds, 0))
        if (plan.begin_pts) sampler.cover(double(*plan.begin_pts) * av_q2d(facts.time_base) - warmup_seconds);
    }
    sampler.check_clock_by_bytes();
    std::vector<Keyframe> keyframes = sampler.keyframes();
    log_debug("{}: sampled around {} cut targets: {}", in.path, targets.last_k, sampler.summary());
    return keyframes;
  } catch (const SamplingAbandoned& a) {
    log_info("{}: {}; reading every packet instead", in.path, a.why);
    return std::nullopt;
  }
}

}  // namespace sp
