// choose_staggered_segments (declared in keyframes.h): the cuts of a `--jobs`
// run that chose its own number of segments.
#include <algorithm>
#include <cmath>
#include <optional>

#include "orchestration/keyframe_times.h"
#include "orchestration/keyframes.h"

namespace sp {
namespace {

// The last round's segments all ending together leave the concat all but
// one of them to copy after the workers (halftone on four GPUs: 2.1 s of a
// 15 s run). Each one this share of a mean segment longer than the one
// before lets the concat copy the early ones while the later ones are still
// made. The concat can copy a segment only once the one before it is
// joined, so what is left after the workers is about its copy time less the
// step's time: the step pays for itself up to (frames a worker makes per
// second) / (frames the concat copies per second). Measured on 2 x H200
// (docs/perf.md, session 33), halftone's 1,850-frame segments of 1 GB copy
// at 2,000 fps while a GPU makes 220 fps: 0.11; a step of 0.06 left 0.62 s
// of a 9.7 s run to copy after the workers. Session 29 (4 x H100, 8
// workers): 0.03 left 1.1-1.5 s, 0.06 0.8-1.05 s, for 0.3-0.45 s more of
// the workers; pencil (the encoders on the cores) lost nothing. Since the
// concat makes MP4's length-prefixed H.264 on its read-ahead thread
// (session 35), it copies halftone's 1080p segments at 2,550 fps on an
// H200 host's 16 cores (was 1,740): 220 / 2,550 = 0.086.
// kLastRoundSpread caps the step for many workers, so that the longest
// segment of the round stays within 21% of the mean.
constexpr double kLastRoundStep = 0.09;
constexpr double kLastRoundSpread = 0.42;
// A keyframe this close to a target (a share of a mean segment) is close
// enough: a cut there decodes nothing that is not shown.
constexpr double kKeyframeSnap = 0.01;
// A cut between keyframes needs frames around it: the GOP it falls in must
// hold at least this share of what its length holds at the average rate.
constexpr double kDenseGop = 0.9;
// Shorter segments are cut at keyframes: a cut between them decodes up to a
// GOP more, which a short segment would feel.
constexpr double kMinSegmentSeconds = 2;

// Segment k's share of the work: 1, but in the last round 1 + step * (q - mean q).
std::vector<double> segment_weights(int segments, int jobs) {
  const int last_round = std::min(segments, jobs);
  const double step = std::min(kLastRoundStep, kLastRoundSpread / std::max(1, last_round - 1));
  std::vector<double> weights(size_t(segments), 1.0);
  for (int q = 0; q < last_round; ++q) weights[size_t(segments - last_round + q)] = 1 + step * (q - (last_round - 1) / 2.0);
  return weights;
}

// Frames shown from keyframe i on, up to the next keyframe or the end; nullopt where not counted.
std::optional<int64_t> frames_in_gop(const KeyframeTimes& k, size_t i) {
  const KeyframeScan& scan = k.scan();
  if (scan.keyframes[i].frames_before < 0) return std::nullopt;
  if (i + 1 < k.size()) return k.frames_between(i, i + 1);
  if (scan.frame_count < 0) return std::nullopt;
  return scan.frame_count - scan.keyframes[i].frames_before;
}

// Whether the GOP of keyframe i holds frames at about the average rate, so
// that a cut inside it has frames on both sides.
bool dense_gop(const KeyframeTimes& k, size_t i, double end_seconds) {
  const std::optional<int64_t> frames = frames_in_gop(k, i);
  const double until = i + 1 < k.size() ? k.seconds(i + 1) : end_seconds;
  return frames && double(*frames) >= kDenseGop * (until - k.seconds(i)) * av_q2d(k.scan().frame_rate);
}

// At the target itself, decoding from the keyframe that leaves `warmup`
// frames before it (counted up to the keyframe before the cut; after it, the
// frames that start before the cut at the average rate); nullopt where that
// keyframe's GOP is not dense.
std::optional<SegmentCut> cut_between_keyframes(const KeyframeTimes& k, double t, int warmup, double end_seconds) {
  const std::optional<size_t> before = k.last_at_or_before(t);
  if (!before || !dense_gop(k, *before, end_seconds)) return std::nullopt;
  const int64_t begin = std::llround(t / av_q2d(k.scan().time_base));
  const double fps = av_q2d(k.scan().frame_rate);
  const double begin_seconds = double(begin) * av_q2d(k.scan().time_base);
  const int64_t after_keyframe = int64_t(std::ceil((begin_seconds - k.seconds(*before)) * fps - 1e-6));
  return SegmentCut{begin, k.pts(k.warmup_start(*before, warmup - int(after_keyframe))), begin_seconds};
}

}  // namespace

std::vector<SegmentPlan> choose_staggered_segments(const KeyframeScan& scan, int segments, int jobs,
                                                   int warmup_frames) {
  const double span = scan.duration_seconds;
  if (jobs < 2 || segments < 2 || scan.source == "sampled" || !(span > 0) || scan.keyframes.empty() ||
      span / segments < kMinSegmentSeconds)
    return choose_segments(scan, segments, 0, warmup_frames);
  const KeyframeTimes keyframes(scan);
  const std::vector<double> weights = segment_weights(segments, jobs);
  const double mean = span / segments, end_seconds = scan.start_seconds + span;
  std::vector<SegmentCut> cuts;
  double before = 0;
  for (int k = 1; k < segments; ++k) {
    before += weights[size_t(k - 1)];
    const double t = scan.start_seconds + span * before / segments;
    const bool keyframe_to_cut_at = keyframes.size() > 1;  // the first one never is
    const size_t nearest = keyframe_to_cut_at ? keyframes.nearest_after_first(t) : 0;
    std::optional<SegmentCut> cut;
    if (keyframe_to_cut_at && std::abs(keyframes.seconds(nearest) - t) <= kKeyframeSnap * mean)
      cut = keyframes.cut_at(nearest, warmup_frames);
    if (!cut) cut = cut_between_keyframes(keyframes, t, warmup_frames, end_seconds);
    if (!cut && keyframe_to_cut_at) cut = keyframes.cut_at(nearest, warmup_frames);
    // A segment needs a frame of its own: never the file's first keyframe or before, never an earlier cut.
    if (!cut || cut->begin_pts <= keyframes.pts(0) || (!cuts.empty() && cut->begin_pts <= cuts.back().begin_pts))
      continue;
    cuts.push_back(*cut);
  }

  return plans_from_cuts(cuts, scan.start_seconds);
}

}  // namespace sp
