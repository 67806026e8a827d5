#pragma once
// Where a video can be cut without decoding it: its keyframes, read from the
// demuxer's index where it has one (MP4/MOV, Matroska cues, ...), else from a
// scan of packet headers (no decoding either way).
#include <cstdint>
#include <string>
#include <vector>

#include "orchestration/manifest.h"

namespace sp {

struct Keyframe {
  int64_t pts = 0;                // presentation time, video stream time base
  int64_t frames_before = -1;     // video frames before it in decode order; -1: unknown (sparse index)
};

struct KeyframeScan {
  int video_stream = -1;
  AVRational time_base{1, 1};
  AVRational frame_rate{25, 1};   // average, for turning warm-up frames into time where counts are unknown
  double start_seconds = 0;       // the file's start time (earliest of its streams): where durations and
                                  // segments' begin/end seconds count from
  double duration_seconds = -1;   // from start_seconds; -1: unknown
  int64_t frame_count = -1;       // -1: unknown
  std::vector<Keyframe> keyframes;  // increasing pts; the first one is where decoding can start
  std::string source;             // "index" or "packets"
};

// Throws sp::Error: no_input (66) for a missing file, data_error (65) for no video stream.
KeyframeScan scan_keyframes(const std::string& path);

// Cuts at keyframes nearest to equal shares (segments > 0) or to multiples of
// segment_seconds (> 0). Fewer segments come back where the keyframes do not
// allow more (one keyframe: one segment). Segment 0 begins at -infinity, the
// last ends at +infinity; each other boundary is a keyframe's pts. seek_pts is
// the latest keyframe with at least `warmup_frames` frames before the
// segment's begin (by frame counts where known, else by time at frame_rate).
// Files are named segment_0000.nut, ...
std::vector<SegmentPlan> choose_segments(const KeyframeScan& scan, int segments, double segment_seconds,
                                         int warmup_frames);

}  // namespace sp
