#pragma once
// The video of a concat: the segments' packets one after the other, in the
// output's time base, with the decode times a single run would have given
// them (see DecodeTimes).
extern "C" {
#include <libavformat/avformat.h>
}

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "orchestration/decode_times.h"
#include "orchestration/segment_file.h"

namespace sp {

// A segment file read on a thread of its own ahead of the join, so that
// reading it overlaps with writing the output (the join after the last
// worker was a read and a write of every byte, one after the other):
// packets as SegmentFile::read gives them, each through `check` where given,
// at most kBytes ahead; with `length_prefixed`, H.264 as MP4 stores it
// (codecs/h264_in_mp4.h), made here rather than on the muxer's thread.
class SegmentReadAhead {
 public:
  static constexpr size_t kBytes = size_t(64) << 20;
  SegmentReadAhead(std::unique_ptr<SegmentFile> file, std::optional<SegmentFrameCheck> check, bool length_prefixed);
  ~SegmentReadAhead();  // stops the reader
  SegmentReadAhead(const SegmentReadAhead&) = delete;
  SegmentReadAhead& operator=(const SegmentReadAhead&) = delete;

  // The next packet; false at the file's end. Rethrows the reader's error.
  bool next(AVPacket* packet);
  const SegmentFile& file() const { return *file_; }

 private:
  void read_all();

  std::unique_ptr<SegmentFile> file_;
  std::optional<SegmentFrameCheck> check_;
  bool length_prefixed_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<PacketPtr> packets_;
  size_t bytes_ = 0;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread reader_;  // last: starts once the rest is made
};

class JoinedVideo {
 public:
  // The k-th segment to join; nullopt after the last one. It may block until
  // that segment is finished.
  using Segments = std::function<std::optional<SegmentToJoin>(size_t k)>;

  // Every segment has `segment_time_base` and reorders `reorder_delay` frames
  // deep (as SegmentChecker makes sure). With a `checker`, each segment is
  // checked as it is read (its header when opened, its frames one by one),
  // so that a segment is read once, not once to check and once to join.
  // With `length_prefixed`, H.264 packets come as MP4 stores them.
  JoinedVideo(Segments segments, AVRational segment_time_base, int reorder_delay, AVRational output_time_base,
              SegmentChecker* checker = nullptr, bool length_prefixed = false);
  ~JoinedVideo();

  // False after the last packet of the last segment.
  bool next(AVPacket* packet);
  // Whether the latest packet is one of the last reorder delay + 1: the one
  // that shows the last frame is among them.
  bool in_last_frames() const { return segments_done_ && ahead_.size() <= size_t(reorder_delay_); }
  int64_t end() const { return end_; }  // of the latest frame read, in the output's time base

 private:
  struct Ahead {
    PacketPtr packet;
    size_t segment;  // its index in names_
  };
  bool read(AVPacket* packet);
  void read_ahead();

  Segments segments_;
  SegmentChecker* checker_;
  bool length_prefixed_;
  AVRational segment_time_base_, time_base_;
  int reorder_delay_;
  size_t next_segment_ = 0;
  std::unique_ptr<SegmentReadAhead> file_;
  std::vector<std::string> names_;  // of the segments opened so far
  bool segments_done_ = false;
  std::deque<Ahead> ahead_;  // read, not yet given out
  DecodeTimes decode_times_;
  int64_t last_dts_ = AV_NOPTS_VALUE;
  int64_t end_ = INT64_MIN;
};

}  // namespace sp
