#pragma once
// Where a video can be cut without decoding it: its keyframes, read from the
// demuxer's index where it has one (MP4/MOV, Matroska cues, ...), else from a
// scan of packet headers (no decoding either way). An index that lists only
// some keyframes (FLV, fragmented MP4 with a segment index, NUT at times) is
// caught by reading its widest gaps and its tail, and the packets are read
// instead. A large file without an index (MPEG-TS above all: a 12 GB one
// takes 13-36 s to read through) is read only around the places a plan cuts
// at, found by seeking: see scan_keyframes_for.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "orchestration/manifest.h"

namespace sp {

struct Keyframe {
  int64_t pts = 0;                // presentation time, video stream time base (exact, B-frames and open GOPs too)
  int64_t frames_before = -1;     // video packets before it in decode order (hidden ones before an edit
                                  // list's start included); -1: unknown (an index of keyframes only)
};

struct KeyframeScan {
  int video_stream = -1;
  AVRational time_base{1, 1};
  AVRational frame_rate{25, 1};   // average, for turning warm-up frames into time where counts are unknown
  double start_seconds = 0;       // the file's start time (earliest of its streams): where durations and
                                  // segments' begin/end seconds count from
  double duration_seconds = -1;   // from start_seconds; -1: unknown
  int64_t frame_count = -1;       // frames shown; -1: unknown
  // Every keyframe, increasing pts; the first one is where decoding can
  // start. Empty for a stream without timestamps (a raw .h264): it cannot be
  // cut by time.
  std::vector<Keyframe> keyframes;
  // "index", "packets" (every packet read) or "sampled" (scan_keyframes_for
  // read around the cuts only: `keyframes` lists those near them and the
  // first, frames_before and frame_count are unknown).
  std::string source;
};

// Throws sp::Error naming the file: no_input (66) for a missing or unreadable
// file; data_error (65) for one that is not media, has no video stream, a
// read error, or keyframe times that go backwards (joined streams whose
// clocks restart); interrupted (130) on Ctrl-C.
KeyframeScan scan_keyframes(const std::string& path);

// What choose_segments will be asked.
struct CutRequest {
  int segments = 0;
  double segment_seconds = 0;
  int warmup_frames = 0;
};

// Files without an index smaller than this are read through; larger ones are
// sampled. The environment variable SP_SAMPLED_SCAN_MIN_BYTES overrides it
// (0 samples every file that can be: tests use it). Throws sp::Error(usage)
// for a value that is not a byte count.
int64_t sampled_scan_min_bytes();

// As scan_keyframes, but where the file has no index, can seek, and holds at
// least sampled_scan_min_bytes(), only the keyframes choose_segments needs
// for one request are read (source "sampled"): the first, and around each
// place it looks at (a cut's target time, where a cut's warm-up begins) the
// last one before it up to the first past it, each place reached by a seek
// and read from a bit before it. choose_segments then cuts exactly where it
// would from every keyframe; warm-up is estimated by time, as for an index
// of keyframes only, where a full scan of packets would have counted frames.
// `request` is asked of a scan that holds the file's start, duration and
// frame rate but no keyframes yet (a default count of segments depends on
// the duration); a null one reads every keyframe. Every packet is read
// instead, noted in the log, where sampling cannot be trusted or would not
// pay: the container gives no start, duration or frame rate; over 2048
// places; a seek fails; sampling reads, or at its pace over the first
// places would read, over a quarter of the file (64 MiB at least: GOPs
// about as long as the segments); decode times fall somewhere in file order
// (a clock that restarts, checked at the places read and at 32 evenly
// spread byte positions: a restart between those goes unnoticed). Throws as
// scan_keyframes.
KeyframeScan scan_keyframes_for(const std::string& path,
                                const std::function<CutRequest(const KeyframeScan&)>& request);

// Where choose_segments aims its cuts: start + k * step seconds for k = 1 ..
// last_k. With segment_seconds, the multiples of it that lie more than
// kCutTargetEndMargin seconds before the end of the duration: one that is the
// end up to rounding (109.2 s in pieces of 36.4 s) makes no cut. Throws
// sp::Error(usage) unless exactly one of segments and segment_seconds is > 0.
inline constexpr double kCutTargetEndMargin = 1e-6;
struct CutTargets {
  double start = 0;
  double step = 0;
  double last_k = 0;
};
CutTargets cut_targets(const KeyframeScan& scan, int segments, double segment_seconds);

// Cuts at the keyframes nearest to equal shares of the duration (segments >
// 0) or to multiples of segment_seconds (> 0) after the start, the earlier on
// a tie; exactly one of the two, else sp::Error(usage). Never at the first
// keyframe, never twice at one, so fewer segments come back where the
// keyframes do not allow more (one keyframe: one segment), and none is empty.
// Segment 0 begins at -infinity, the last ends at +infinity; each other
// boundary is a keyframe's pts. seek_pts is the latest keyframe with at least
// `warmup_frames` frames from it to the segment's begin (counted in decode
// order where the scan counted frames, else estimated by time at frame_rate,
// rounding down), or the first keyframe where none has that many; with no
// warm-up, the segment's own keyframe. begin/end_seconds count from
// start_seconds. Files are named segment_0000.nut, ... Pure: no file is read.
std::vector<SegmentPlan> choose_segments(const KeyframeScan& scan, int segments, double segment_seconds,
                                         int warmup_frames);

// The cuts of a `--jobs` run that chose its own count: `segments` for `jobs`
// workers, taken in index order, so the last min(jobs, segments) are the last
// round. Equal shares of the duration, but each segment of the last round
// longer than the one before it by 12% of a mean one (0.42 / (round - 1)
// where that is less): they end one after another, and the concat joins
// each while the later ones are still being made. A cut
// is exact to the pts: at a keyframe within 1% of a mean segment of its
// target, else at the target, decoded from an earlier keyframe (seek_pts:
// the warm-up as choose_segments counts it, frames after the keyframe before
// the cut estimated at the average rate). Cut only at keyframes, as
// choose_segments would cut into equal shares, where the keyframes of a
// "sampled" scan are only those near equal shares, where the duration is
// unknown, where segments would be under 2 s, and at a target whose GOP is
// not counted or holds under 90% of the frames its length would at the
// average rate (still pictures, gaps). Pure: no file is read.
std::vector<SegmentPlan> choose_staggered_segments(const KeyframeScan& scan, int segments, int jobs,
                                                   int warmup_frames);

}  // namespace sp
