#pragma once
// The segment files of a plan as the concat sees them: which ones to join,
// each checked against the plan and against segment 0 before anything is
// written, and read packet by packet.
extern "C" {
#include <libavformat/avformat.h>
}

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "orchestration/growing_file.h"
#include "orchestration/manifest.h"

namespace sp {

// One segment's video file, opened for reading. Every failure throws
// sp::Error(data_error) naming the segment and its file.
class SegmentFile {
 public:
  SegmentFile(int index, const std::string& path);
  // A segment its worker is still writing, read as it grows: never seeked,
  // so the demuxer reads no index from its end.
  SegmentFile(int index, std::shared_ptr<GrowingFile> growing);
  ~SegmentFile();
  SegmentFile(const SegmentFile&) = delete;
  SegmentFile& operator=(const SegmentFile&) = delete;

  const AVStream& video() const { return *context_->streams[0]; }
  const AVDictionary* tags() const { return context_->metadata; }
  // The next packet (its own reference); false at the end of the file. Its
  // times are the encoder's, less the offset a writer that kept B-frames
  // added (kTimestampOffsetTag); decode times only where the demuxer derives them.
  bool read(AVPacket* packet);
  // A segment read as it grows: a read waiting for its writer ends (an error).
  void stop_waiting() {
    if (growing_) growing_->cancel();
  }
  // "segment 3 (/work/segment_0003.nut)"
  const std::string& name() const { return name_; }

 private:
  void open(const std::string& path);
  void check_opened();
  [[noreturn]] void fail(const std::string& what) const;
  static int read_growing(void* opaque, uint8_t* buffer, int size);

  std::string name_;
  std::shared_ptr<GrowingFile> growing_;
  int64_t growing_offset_ = 0;
  AVIOContext* growing_io_ = nullptr;
  AVFormatContext* context_ = nullptr;
  int64_t timestamp_offset_ = 0;  // in the stream's time base
  std::unique_ptr<FfmpegLogWatch> log_watch_;  // last: stops watching before the context goes
};


struct SegmentToJoin {
  int index = 0;
  std::string path;
  bool unfinished = false;  // the partial file of an interrupted segment
  int64_t frames = 0;
  std::shared_ptr<GrowingFile> growing;  // set while its worker writes it: read as it grows

  std::unique_ptr<SegmentFile> open() const {
    return growing ? std::make_unique<SegmentFile>(index, growing) : std::make_unique<SegmentFile>(index, path);
  }
};

// One segment's frames, checked as they are read: each with a timestamp,
// inside the segment's range, a keyframe first. Throws
// sp::Error(data_error) naming the segment.
class SegmentFrameCheck {
 public:
  SegmentFrameCheck(const Manifest& manifest, const SegmentFile& file, const SegmentToJoin& segment);
  // A packet as SegmentFile::read gives it.
  void add(const AVPacket& packet);
  // At the file's end: its frames; a finished segment without any throws.
  int64_t finish() const;

 private:
  const Manifest& manifest_;
  const SegmentPlan& plan_;
  std::string name_;
  AVRational time_base_;
  int64_t begin_ = INT64_MIN, end_ = INT64_MAX;
  bool unfinished_ = false;
  int64_t frames_ = 0;
};

// Checks segments in index order against the plan and against the first
// one checked: this plan's and index's tags, the first one's codec, size,
// setup data and time base, and its frames (SegmentFrameCheck). Throws
// sp::Error(data_error) naming the segment.
class SegmentChecker {
 public:
  explicit SegmentChecker(const Manifest& manifest);
  ~SegmentChecker();
  // Reads the whole file: counts its frames into segment.frames.
  void check(SegmentToJoin& segment);
  // What its header says: the tags and format. A reader that reads the file
  // anyway checks its frames with frame_check() as it goes.
  void check_header(const SegmentFile& file, int index);
  SegmentFrameCheck frame_check(const SegmentFile& file, const SegmentToJoin& segment) const {
    return SegmentFrameCheck(manifest_, file, segment);
  }

 private:
  void check_tags(const SegmentFile& file, int index) const;
  void check_format(const SegmentFile& file);

  struct ParametersDeleter {
    void operator()(AVCodecParameters* p) const { avcodec_parameters_free(&p); }
  };
  const Manifest& manifest_;
  std::optional<std::string> first_;
  AVRational first_time_base_{1, 1};
  std::unique_ptr<AVCodecParameters, ParametersDeleter> first_parameters_;
};

// The segments to join, each checked: the final files of all of them, or with
// `finished_prefix_only` the finished ones from the start and the interrupted
// one after them. Throws sp::Error naming the first segment that fails:
// no_input for a missing or unfinished one, data_error for one that is not
// this plan's segment, differs from segment 0 or has frames outside its range.
std::vector<SegmentToJoin> segments_to_join(const Manifest& manifest, bool finished_prefix_only);

// Whether a worker keeps the encoder's B-frames in its segment: where a
// single run into the plan's output would (OutputOptions::segment_keeps_b_frames).
bool segments_keep_b_frames(const Manifest& manifest);

}  // namespace sp
