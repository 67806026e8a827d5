#pragma once
// Encode (software) + mux: libx264, FFV1, PNG, rawvideo or any other FFmpeg
// video encoder, into any container FFmpeg writes (mp4, mkv, mov, avi, nut,
// y4m, raw pipes, image sequences, single images), with audio/subtitle
// streams of the input stream-copied where the container accepts them.
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "codecs/nvenc.h"
#include "codecs/media_reader.h"
#include "pipeline/errors.h"
#include "pipeline/image.h"

namespace sp {

class Muxer;

struct OutputOptions {
  std::string url;           // file, "-" (stdout), an image pattern "out_%04d.png", or a URL FFmpeg writes
  std::string format;        // -f (FFmpeg muxer name; "mkv" and "y4m" are accepted too), else from the extension
  std::string codec;         // libx264, ffv1, png, rawvideo, mpeg4, ...; empty = the container's natural choice
  int crf = 18;              // encoders with a crf option (libx264, libx265, libvpx, ...); qscale for mpeg4/mjpeg
  std::string preset = "medium";  // encoders with a string preset option
  std::string pixel_format;  // optional override: one of sp's PixelFormat names
  bool overwrite = false;
  bool low_latency = false;  // x264 zerolatency, no B-frames, flush each packet
  int threads = 0;           // encoder threads; 0: the encoder's own choice (x264: 1.5 per core)
  EncoderChoice encoder = EncoderChoice::software;
  bool gpu_in_use = false;  // the CUDA backend runs: NVENC may join its context
  // The run's GPUs are known to have no NVENC engine (codecs/nvenc.h's
  // cache), so --encoder auto settles on software before the GPU is up.
  bool gpus_without_nvenc = false;
  std::vector<std::pair<std::string, std::string>> metadata_tags;  // set on the container, after the input's
  // NUT only: the segment of a --jobs run whose joined output keeps the
  // encoder's B-frames (container_keeps_reordering). They stay here too, and
  // every timestamp moves later by the encoder's reorder delay in ticks, as
  // the stream's kTimestampOffsetTag says, so that no decode time is negative.
  bool segment_keeps_b_frames = false;
  // NUT only: the segment of a --jobs run. Its muxer would move a stream
  // whose times start below zero (an MPEG-TS whose clock wraps within the
  // file: FFmpeg gives the frames before the wrap negative times) to start at
  // zero, and the concat would find them outside their segment's range. Every
  // timestamp moves later by the input's start below zero instead, in the
  // same kTimestampOffsetTag, so that a reader gets the input's times back.
  bool segment = false;
};

// What an OutputOptions resolves to; preflight and the writer share it.
struct OutputPlan {
  std::string ffmpeg_url;  // "pipe:1" for "-"
  const AVOutputFormat* format = nullptr;
  const AVCodec* encoder = nullptr;
  bool to_pipe = false;         // stdout: nothing may seek
  bool image_sequence = false;  // image2 with a %d pattern
  bool single_image = false;    // image2 with a plain file name: one picture
  bool is_file = false;         // a local path we can check
};
// Throws sp::Error(usage) for unknown formats/codecs and bad combinations.
OutputPlan plan_output(const OutputOptions& options);
// The container part of plan_output (no encoder chosen): for `format` (-f,
// "mkv" and "y4m" accepted) or, when empty, the one `url`'s extension names.
OutputPlan plan_container(const std::string& url, const std::string& format);
// For a file output: an existing file without `overwrite` -> usage (64); a
// missing or unwritable directory, an output that is a directory -> io_error (74).
void check_output_path(const std::string& url, const OutputPlan& plan, bool overwrite);
// Containers that store frames on a constant-rate grid (AVI & co.): a writer
// rounds frame times to 1/frame rate for them.
bool container_keeps_constant_rate(const AVOutputFormat* format);
// Containers a writer keeps the encoder's B-frames in: not AVI (decode order
// only: frames would play late by the reorder delay) nor NUT (it cannot store
// the negative decode times of the first reordered frames, so its muxer would
// move every stream later by that delay).
bool container_keeps_reordering(const AVOutputFormat* format);
// The time base a writer encodes video in for this container and codec: the
// input's where the container keeps any timestamps (frame times stay exact),
// else 1/frame rate (a codec that stores it in 16 bits gets the rate's, or ms).
AVRational writer_video_time_base(const AVOutputFormat* format, AVCodecID codec, AVRational input_time_base,
                                  AVRational frame_rate);

// A picture in an encoder's device memory (NVENC's CUDA frames): whoever
// acquires it fills `view`'s planes on the GPU, then hands it to write_video.
struct DevicePicture {
  PlanarView view;  // on_device, encoder_format() at output_size()
  std::shared_ptr<AVFrame> frame;
};

class MediaWriter {
 public:
  // Checks before any work starts: unknown codec/format or a codec the
  // container cannot hold, bad crf/preset/pixel format -> usage (64); an
  // existing output without overwrite -> usage (64); a missing or unwritable
  // directory, an output that is a directory -> io_error (74); an encoder this
  // FFmpeg lacks -> unavailable (69). Writes nothing.
  static void preflight(const OutputOptions& options);
  // Where the output would ask for NVENC (--encoder auto or nvenc, a codec
  // NVENC has), finds out now whether the calling thread's GPU has an NVENC
  // engine at all, so that a writer opened later need not. The first probe
  // of a process took 0.27 s on an H200, which has none: a run calls this
  // once the GPU is up, while its stages are configured. Never throws.
  static void learn_nvenc_engine(const OutputOptions& options);

  // Opens the encoder and the output, writes the header. `input_video` gives
  // the time base (pts/duration of write_video are in it), frame rate, colour.
  MediaWriter(const OutputOptions& options, const VideoStreamInfo& input_video, Size output_size,
              const MediaReader& reader);
  MediaWriter(const OutputOptions& options, const VideoStreamInfo& input_video, Size output_size,
              const std::vector<CopyStream>& copy_streams = {}, const AVDictionary* metadata = nullptr);
  ~MediaWriter();  // finishes if finish() was not called (errors are logged)
  MediaWriter(const MediaWriter&) = delete;
  MediaWriter& operator=(const MediaWriter&) = delete;

  PixelFormat encoder_format() const { return encoder_format_; }  // what write_video takes
  ColorSpec encoder_color() const { return encoder_color_; }      // matrix/range RGBA must be converted with
  Size output_size() const { return output_size_; }               // what write_video takes
  // What is encoded: output_size less a last odd column/row where the codec
  // needs even dimensions (4:2:0 in H.264 & co.); the picture is cropped.
  Size encoded_size() const { return encoded_size_; }
  // A single image output keeps the first picture only: the caller may stop.
  bool wants_more_frames() const { return !(plan_.single_image && frames_written_ > 0); }

  // Host picture of encoder_format() at output_size(); pts/duration in the
  // input video's time base. The picture is copied before this returns.
  // With an `owner` that keeps the picture's memory alive, the encoder takes a
  // reference instead of copying it; the owner is released when it lets go.
  void write_video(const PlanarView& picture, int64_t pts, int64_t duration, std::shared_ptr<void> owner = {});
  // NVENC with CUDA input: pictures are made in device memory instead.
  bool takes_device_pictures() const { return device_frames_ != nullptr; }
  // Any thread; the pool grows to what is held, then recycles.
  DevicePicture acquire_device_picture();
  // The picture's planes must be complete (the GPU work that filled them done).
  void write_video(DevicePicture picture, int64_t pts, int64_t duration);
  // A stream-copied packet from the reader (input stream index, input time
  // base); ignored for a dropped stream. The packet is left as it was.
  void write_packet(const AVPacket* packet);
  // Flushes the encoder, writes the trailer, closes the output. Idempotent;
  // safe after an interrupted read or a failed write (the first error wins).
  void finish();

  std::string description() const;
  // Why --encoder auto did not use NVENC (empty when it did, or was not asked).
  const std::string& encoder_fallback_reason() const { return encoder_fallback_reason_; }  // e.g. "libx264 crf 18 preset medium -> mp4 (yuv420p bt709 limited)"
  const std::vector<std::string>& warnings() const { return warnings_; }  // dropped streams and the like
  int64_t frames_written() const { return frames_written_; }
  int64_t packets_copied() const;
  const std::string& url() const { return options_.url; }

 private:
  void choose_encoder();
  std::optional<std::string> probe_nvenc(const AVCodec* nvenc);
  void choose_picture_format(const VideoStreamInfo& input);
  void open_encoder(const VideoStreamInfo& input);
  void open_output(const std::vector<CopyStream>& copy_streams, const AVDictionary* metadata);
  void close_output_after_failure();
  void publish_output();
  void drain_encoder();
  void write_muxed(AVPacket* packet);
  void offset_for_segment(AVPacket* packet) const;
  void warn(const std::string& message);
  [[noreturn]] void fail(ExitCode code, const std::string& what, int error);
  bool write_raw_in_place(const PlanarView& picture, int64_t pts, int64_t duration, std::shared_ptr<void>& owner);
  void check_picture(const PlanarView& picture) const;
  int64_t encoder_pts_for(int64_t pts);  // in the encoder's clock, increasing in the muxer's
  int64_t encoder_duration_of(int64_t duration) const;
  void encode(AVFrame* frame, int64_t encoder_pts, int64_t encoder_duration);
  void use_device_frames();

  OutputOptions options_;
  OutputPlan plan_;
  std::string name_;  // for messages
  PixelFormat encoder_format_ = PixelFormat::yuv420p;
  AVPixelFormat encoder_av_format_ = AV_PIX_FMT_YUV420P;
  ColorSpec encoder_color_;
  Size output_size_, encoded_size_;
  AVRational input_time_base_{1, 1};
  AVRational encoder_time_base_{1, 1};
  bool constant_rate_only_ = false;
  std::string encoder_settings_;  // " crf 18 preset medium"
  AVBufferRef* nvenc_device_ = nullptr;  // set when NVENC encodes
  AVBufferRef* device_frames_ = nullptr;  // NVENC's CUDA input frames, when it reads device memory
  std::string encoder_fallback_reason_;

  CodecContextPtr encoder_;
  std::unique_ptr<Muxer> muxer_;
  FramePtr frame_;
  PacketPtr packet_;
  std::map<int64_t, int64_t> durations_;  // encoder pts -> duration, for encoders that drop it
  int64_t last_encoder_pts_ = INT64_MIN;
  int64_t first_input_pts_ = INT64_MIN, first_encoder_pts_ = 0;  // constant-rate grid anchor
  int64_t frames_written_ = 0;
  int64_t video_packets_muxed_ = 0;
  int64_t segment_reorder_delay_ = 0;  // encoder ticks (see OutputOptions::segment_keeps_b_frames)
  int64_t segment_time_shift_ = 0;     // encoder ticks (see OutputOptions::segment)
  bool adjusted_pts_warned_ = false;
  bool rounded_warned_ = false;
  bool extra_images_warned_ = false;
  bool finished_ = false;
  bool writes_temporary_ = false;  // the muxer writes temporary_output_path(url); finish() renames it
  std::vector<std::string> warnings_;
  std::mutex mutex_;
  std::unique_ptr<FfmpegLogWatch> log_watch_;  // last: stops watching before the contexts go
};

}  // namespace sp
