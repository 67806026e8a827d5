#pragma once
// An output container: one video stream described by its parameters, the
// input's stream-copied streams that the container takes (the others are
// dropped with a warning), the input's tags; packets in, the trailer at the
// end. MediaWriter muxes its encoder's packets through it; the concat of a
// segment plan muxes packets copied from the segment files.
extern "C" {
#include <libavformat/avformat.h>
}

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "codecs/media_reader.h"
#include <system_error>

#include "codecs/media_writer.h"
#include "pipeline/errors.h"

namespace sp {

// Where a file output is written until it is complete: a hidden name in the
// same folder, so that the rename to the real name is atomic.
std::string temporary_output_path(const std::string& path);
// Gives a finished temporary file its output's name. An existing file there
// is moved aside first and removed after: renamed over an existing file,
// ext4 writes the new file's data to disk before the rename returns
// (auto_da_alloc: 2.5 s for a 4 GB output on a 4 x H100 host), which a
// rename to a free name does not. The name is free only between two renames;
// if the second fails, the existing file gets its name back. Sets `error`.
// The file it replaced is removed in the background (pipeline/background_removal.h).
void move_into_place(const std::string& temporary, const std::string& path, std::error_code& error);
// Whether `path` is written where it is, never through a temporary name: an
// existing device, FIFO or socket (`-o /dev/null`), which a rename would
// replace with a regular file.
bool written_in_place(const std::string& path);

class PipeSplicer;

struct MuxedVideo {
  const AVCodecParameters* codecpar = nullptr;  // copied as it is
  AVRational time_base{1, 1};   // asked of the muxer, which may choose another: see Muxer::video_stream()
  AVRational frame_rate{0, 1};  // nominal (avg_frame_rate); 0/1: unknown
  AVRational sample_aspect_ratio{0, 1};
  AVRational timestamp_offset{0, 1};  // seconds added to every video timestamp; tagged in NUT (kTimestampOffsetTag)
};

struct MuxerOptions {
  OutputPlan plan;
  std::string name;  // for messages: the output as the user named it
  bool low_latency = false;  // flush every packet
  // Low latency to stdout: each packet goes out in one write(), and the pipe
  // is grown to hold this many bytes.
  size_t live_pipe_bytes = 0;
  std::vector<std::pair<std::string, std::string>> metadata_tags;  // set on the container, after the input's
};

class Muxer {
 public:
  // Opens the output and writes the header. Throws sp::Error: io_error when
  // the output cannot be opened or written, usage for a combination the
  // container refuses. A file it created is removed again when it throws.
  Muxer(const MuxerOptions& options, const MuxedVideo& video, const std::vector<CopyStream>& copy_streams,
        const AVDictionary* metadata);
  ~Muxer();  // closes without a trailer unless finish() was called
  Muxer(const Muxer&) = delete;
  Muxer& operator=(const Muxer&) = delete;

  // Timestamps of video packets are in its time base.
  const AVStream* video_stream() const { return video_stream_; }
  // Takes the packet's reference; its stream index is set here.
  void write_video(AVPacket* packet);
  // Whether write_raw_picture can take a picture's planes, back to back, in
  // place of the encoder's packet: y4m to a live pipe (FFmpeg 5 muxes y4m
  // only from wrapped frames, whose planes it would copy row by row).
  bool takes_raw_pictures() const { return splice_y4m_frames_; }
  // A packet of planes back to back: y4m's frame header, then the planes
  // spliced into the pipe uncopied. Takes the packet's reference.
  void write_raw_picture(AVPacket* packet);
  // A packet of a copied stream (input stream index, input time base); false
  // for a stream this output does not carry. The packet is left as it was.
  bool write_copied(const AVPacket* packet);
  // Writes the trailer and closes the file; the first error is thrown.
  void finish();
  // After a failure: closes without a trailer and removes the file it created.
  void discard();

  const std::vector<std::string>& warnings() const { return warnings_; }  // dropped streams
  int64_t packets_copied() const { return packets_copied_; }

 private:
  void open(const MuxedVideo& video, const std::vector<CopyStream>& copy_streams, const AVDictionary* metadata);
  bool try_open(const MuxedVideo& video, const std::vector<const CopyStream*>& streams, const AVDictionary* metadata,
                bool last_try, int* error);
  void close_file();
  int close_io();  // flushes and closes context_->pb; an AVERROR or 0
  void write(AVPacket* packet);
  std::unique_ptr<PipeSplicer> splicer_;  // to a live stdout pipe
  bool splice_packets_ = false;          // raw video: packets bypass the muxer into the pipe
  bool splice_y4m_frames_ = false;       // y4m: header by the muxer, then frames spliced by us
  void warn(const std::string& message);
  [[noreturn]] void fail(ExitCode code, const std::string& what, int error);

  MuxerOptions options_;
  AVFormatContext* context_ = nullptr;
  AVStream* video_stream_ = nullptr;
  bool seekable_ = true;  // the output can be rewritten at the end (index, moov)
  bool created_file_ = false;
  bool live_stdout_ = false;  // context_->pb is ours (open_live_stdout), not FFmpeg's
  bool finished_ = false;
  std::vector<int> output_index_;  // by input stream index; -1 = dropped
  std::vector<AVRational> input_time_bases_;
  PacketPtr copy_packet_;
  int64_t packets_copied_ = 0;
  std::vector<std::string> warnings_;
  std::unique_ptr<FfmpegLogWatch> log_watch_;  // last: stops watching before the context goes
};

}  // namespace sp
