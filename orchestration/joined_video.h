#pragma once
// The video of a concat: the segments' packets one after the other, in the
// output's time base, with the decode times a single run would have given
// them (see DecodeTimes).
extern "C" {
#include <libavformat/avformat.h>
}

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "orchestration/decode_times.h"
#include "orchestration/segment_file.h"

namespace sp {

class JoinedVideo {
 public:
  // The k-th segment to join; nullopt after the last one. It may block until
  // that segment is finished.
  using Segments = std::function<std::optional<SegmentToJoin>(size_t k)>;

  // Every segment has `segment_time_base` and reorders `reorder_delay` frames
  // deep (as SegmentChecker makes sure).
  JoinedVideo(Segments segments, AVRational segment_time_base, int reorder_delay, AVRational output_time_base);
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
  AVRational segment_time_base_, time_base_;
  int reorder_delay_;
  size_t next_segment_ = 0;
  std::unique_ptr<SegmentFile> file_;
  std::vector<std::string> names_;  // of the segments opened so far
  bool segments_done_ = false;
  std::deque<Ahead> ahead_;  // read, not yet given out
  DecodeTimes decode_times_;
  int64_t last_dts_ = AV_NOPTS_VALUE;
  int64_t end_ = INT64_MIN;
};

}  // namespace sp
