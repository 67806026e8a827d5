#pragma once
// Keyframe scans made up for the cut choosers' tests: a constant frame rate,
// keyframes at chosen frame numbers, counts known or not.
#include <vector>

extern "C" {
#include <libavutil/mathematics.h>
}

#include "orchestration/keyframes.h"

namespace sp::test {

// Frame rates with a time base in which every frame lasts a whole number of
// ticks, so times and frame counts agree exactly.
struct Clock {
  AVRational frame_rate, time_base;
};
constexpr Clock kClocks[] = {
    {{25, 1}, {1, 1000}}, {{30000, 1001}, {1, 30000}}, {{60, 1}, {1, 90000}}, {{24, 1}, {1, 12288}}};

struct SyntheticScan {
  KeyframeScan scan;
  std::vector<int64_t> keyframe_frames;  // the truth: each keyframe's frame number
};

inline int64_t frame_pts(const Clock& clock, int64_t start_pts, int64_t frame) {
  return start_pts + av_rescale_q(frame, av_inv_q(clock.frame_rate), clock.time_base);
}

inline SyntheticScan make_scan(const Clock& clock, int64_t frames, const std::vector<int64_t>& keyframe_frames,
                               bool counts_known, int64_t start_pts = 0) {
  SyntheticScan s;
  s.keyframe_frames = keyframe_frames;
  s.scan.time_base = clock.time_base;
  s.scan.frame_rate = clock.frame_rate;
  s.scan.start_seconds = double(start_pts) * av_q2d(clock.time_base);
  s.scan.duration_seconds = double(frames) / av_q2d(clock.frame_rate);
  s.scan.frame_count = counts_known ? frames : -1;
  s.scan.source = counts_known ? "index" : "packets";
  for (const int64_t f : keyframe_frames)
    s.scan.keyframes.push_back({frame_pts(clock, start_pts, f), counts_known ? f : -1});
  return s;
}

inline SyntheticScan regular_scan(int64_t frames, int64_t gop, bool counts_known) {
  std::vector<int64_t> keys;
  for (int64_t f = 0; f < frames; f += gop) keys.push_back(f);
  return make_scan(kClocks[0], frames, keys, counts_known);
}

}  // namespace sp::test
