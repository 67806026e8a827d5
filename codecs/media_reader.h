#pragma once
// Demux + decode (software, frame-threaded) of anything libavformat and
// libavcodec can open, yielding pictures in one of sp::PixelFormat's layouts
// and the packets of the streams a writer may stream-copy (audio, subtitles).
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "codecs/kept_decoder.h"
#include "codecs/nvdec.h"
#include "pipeline/image.h"

namespace sp {

// One segment of a planned run, in the video stream's time base: decoding
// starts at the keyframe at or before `seek_pts`; pictures before `begin` are
// lead-in (dropped, or delivered with DecodedFrame::lead_in set when
// `lead_in` is true, for the caller to keep the last ones it needs); the first
// picture at or after `end` ends the input. Copied streams are left out: a
// segment carries video only.
struct PtsWindow {
  std::optional<int64_t> seek_pts;  // none: decode from the start of the file
  int64_t begin = INT64_MIN;
  int64_t end = INT64_MAX;
  bool lead_in = false;
};

struct InputOptions {
  std::string url;               // path, or "-" for stdin (pipe:0)
  std::string format;            // forced demuxer (-f): "rawvideo", "yuv4mpegpipe", "x11grab", ...; empty = probe
  std::string pixel_format;      // rawvideo: "rgba", "rgb24", "bgr0", ... (any FFmpeg name)
  std::optional<Size> size;      // rawvideo / devices
  std::optional<double> rate;    // rawvideo / devices, frames per second
  double start_seconds = 0;      // --start: seek, drop what comes before; output times move back by this much
  double duration_seconds = -1;  // --duration, < 0 = all
  int64_t max_frames = -1;       // --frames, < 0 = all
  bool low_latency = false;      // live pipes: tiny probe, no decoder delay (slice threads only)
  int threads = 0;               // software decoder threads; 0: one per core
  HwDecode hwdec = HwDecode::none;
  // Decoded pictures the caller holds at once (queue + frames in flight).
  // NVDEC surfaces are a fixed pool: each held picture keeps one.
  int frames_held = 8;
  std::optional<PtsWindow> window;
  // False: the video stream is chosen and described (time base, frame rate)
  // but never decoded, and next() yields the copied streams' packets only,
  // for a caller that takes the video from elsewhere (the concat of a plan).
  // MediaReader::last_video_frame() says where the video ends.
  bool decode_video = true;
  std::string software_decode_reason;  // why hwdec was turned off before the reader saw it, for the stats
  // Asked after probing, just before NVDEC would be attached: waits for the
  // GPU to start and says why hardware decoding cannot be used (nullopt: it
  // can). Probing the input thus overlaps with the device start-up.
  std::function<std::optional<std::string>()> hardware_gate;
  // A worker's decoder from its previous input, taken when this stream is
  // described the same way, and given back by close_decoder() after a clean
  // end (codecs/kept_decoder.h). Null: the reader opens and frees its own.
  KeptDecoder* kept_decoder = nullptr;
  // --hwdec auto: an input whose frames hold at most this many pixels in all
  // is decoded in software, for this reason (said once per process). 0: never.
  double software_decode_up_to_pixels = 0;
  std::string short_input_reason;
};

struct VideoStreamInfo {
  Size size;                   // of the first frame once one was decoded, else from the stream header
  PixelFormat format = PixelFormat::yuv420p;  // what DecodedFrame::view() delivers (first frame once decoded)
  ColorSpec color;             // matrix/range of the pictures (first frame once decoded)
  AVRational time_base{1, 25};   // of pts/duration in DecodedFrame
  AVRational frame_rate{25, 1};  // average (or nominal) rate; never 0
  // The container's start time, where --start counts from (AV_TIME_BASE units).
  int64_t file_start_us = 0;
  double duration_seconds = -1;  // of what will be read (after --start/--duration), < 0 = unknown
  int64_t frame_count_estimate = -1;  // < 0 = unknown
  std::string codec_name;      // decoder, e.g. "h264"
  bool variable_frame_rate_hint = false;
  int stream_index = -1;       // in the input
  // The input's own tags, passed on by a writer when the matrix is kept.
  AVColorPrimaries primaries = AVCOL_PRI_UNSPECIFIED;
  AVColorTransferCharacteristic transfer = AVCOL_TRC_UNSPECIFIED;
  AVColorSpace space = AVCOL_SPC_UNSPECIFIED;
  AVPixelFormat decoder_format = AV_PIX_FMT_NONE;  // before any conversion to `format`
  AVRational sample_aspect_ratio{0, 1};            // 0/1 = unknown (square)
};

// A decoded picture in host memory, in one of sp::PixelFormat's layouts.
// Owns the AVFrame (decoder frames are reference-counted: holding one keeps
// only its buffers alive). Movable, not copyable.
struct DecodedFrame {
  FramePtr frame;
  PixelFormat format = PixelFormat::yuv420p;
  ColorSpec color;
  int64_t pts = 0;       // in VideoStreamInfo::time_base
  int64_t duration = 0;  // in VideoStreamInfo::time_base, > 0
  bool lead_in = false;  // before the PtsWindow's begin: for a temporal state only, never output
  // When the first bytes of its packet could be read: on a live pipe, when
  // they arrived; elsewhere, when reading them began.
  std::chrono::steady_clock::time_point input_ready_at;

  PlanarView view() const;
  Size size() const { return frame ? Size{frame->width, frame->height} : Size{}; }
};

struct FrameTime {
  int64_t pts = 0;       // in VideoStreamInfo::time_base
  int64_t duration = 0;  // > 0
};

struct MediaItem {
  enum class Kind { video, packet, end };
  Kind kind = Kind::end;
  DecodedFrame frame;          // kind == video
  AVPacket* packet = nullptr;  // kind == packet: owned; stream_index is the input stream index

  MediaItem() = default;
  MediaItem(MediaItem&& other) noexcept;
  MediaItem& operator=(MediaItem&& other) noexcept;
  MediaItem(const MediaItem&) = delete;
  MediaItem& operator=(const MediaItem&) = delete;
  ~MediaItem();
  void reset();
};

// A stream the reader passes through as packets (audio, subtitles).
struct CopyStream {
  int index = -1;  // input stream index (= AVPacket::stream_index of its packets)
  const AVCodecParameters* codecpar = nullptr;  // a copy made at open, owned by the reader
  AVRational time_base{1, 1};
  int disposition = 0;
  const AVDictionary* metadata = nullptr;  // a copy made at open, owned by the reader
  std::string description;  // "stream #1 (aac audio)"

  std::shared_ptr<AVCodecParameters> owned_codecpar;
  AVDictionary* owned_metadata = nullptr;  // freed by the reader
};

class MediaReader {
 public:
  // Opens and probes. Throws sp::Error: no_input (66) for a missing/unreadable
  // path, data_error (65) for unrecognizable data or no video stream, usage (64)
  // for an unknown -f or a rawvideo input without size/pixel format,
  // unavailable (69) for a missing decoder.
  explicit MediaReader(const InputOptions& options);
  ~MediaReader();
  MediaReader(const MediaReader&) = delete;
  MediaReader& operator=(const MediaReader&) = delete;

  const VideoStreamInfo& video() const { return video_; }
  const std::vector<CopyStream>& copy_streams() const { return copy_streams_; }
  const AVDictionary* metadata() const;  // container-level tags (title, ...), as they were at open
  const std::string& url() const { return options_.url; }

  // The next video frame or copied packet, in decode order of the input.
  // False at the end (item.kind == end). Corrupt or truncated data: the
  // frames decoded before it are delivered, a warning is logged once, then
  // false; data_error() says what happened so the caller can exit 65 after
  // finalizing its output.
  bool next(MediaItem& item);
  std::optional<std::string> data_error() const { return data_error_; }
  // Frees the decoder once no more frames are wanted: NVDEC's session and
  // surfaces take 0.1-0.25 s to go on an H100, which a caller can overlap with
  // the encoder's flush. next() returns false afterwards; the demuxer, the
  // probed streams and data_error() stay.
  void close_decoder();
  // Without decode_video: the video frames read so far (by presentation time,
  // increasing) with the durations decoding would have given them, but those
  // before the point forget_video_frames_before() last set.
  const std::deque<FrameTime>& video_frames_read() const { return video_frames_read_; }
  std::optional<FrameTime> last_video_frame() const {
    return video_frames_read_.empty() ? std::nullopt : std::optional(video_frames_read_.back());
  }
  void forget_video_frames_before(int64_t pts);
  // Without decode_video: whether the packet of any frame shown at or before
  // `pts` has been read. A later decode time was read, or as many frames
  // shown after it as the deepest reordering of H.264 and HEVC allows, plus
  // one (a stream without decode times), or the input ended.
  bool video_read_through(int64_t pts) const;
  static constexpr size_t kMaxReorderedFrames = 16;

  int64_t frames_delivered() const { return frames_delivered_; }
  // True once NVDEC delivers pictures in device memory; otherwise
  // software_decode_reason() says why it does not (empty when not asked).
  bool decodes_on_device() const { return nvdec_attached_ && !nvdec_refused_; }
  bool hardware_decoder_attached() const { return nvdec_attached_; }
  // True when the decoder came from InputOptions::kept_decoder.
  bool decoder_was_kept() const { return decoder_was_kept_; }
  const std::string& software_decode_reason() const { return software_reason_; }

 private:
  void open_input();
  void select_streams();
  void open_decoder();
  void release();  // what the FFmpeg contexts hold, in the order they need
  void seek_to_start();
  void fill_video_info();
  bool receive_frame(MediaItem& item);
  void deliver(MediaItem& item);
  FramePtr convert(AVFrame* decoded, PixelFormat* format);
  void decode_failed(int error, bool receiving);
  void note_corruption(const std::string& what);
  void check_demuxer_log();
  void check_decoder_log();
  void check_file_end();
  bool keep_packet(AVPacket* packet);
  bool before_awaited_keyframe(const AVPacket* packet);
  void note_video_packet(const AVPacket* packet);
  bool wait_for_input();

  bool hardware_decoding_allowed(const AVCodecParameters* stream);
  bool is_short_input() const;
  std::optional<NvdecChoice> choose_hardware_decoder(const AVCodecParameters* stream);
  void decode_in_software(const AVCodecParameters* stream, const std::string& why, bool said_elsewhere);
  DecoderSetup decoder_setup(bool nvdec) const;
  bool take_kept_decoder(const AVStream* stream, bool nvdec);
  bool decoder_can_be_kept() const;
  FramePtr take_device_frame(AVFrame* decoded, PixelFormat* format);

  InputOptions options_;
  bool nvdec_attached_ = false, nvdec_refused_ = false, logged_device_download_ = false;
  bool decoder_was_kept_ = false;
  DecoderSetup decoder_setup_;  // what decoder_ was opened with
  std::string software_reason_;
  std::string name_;  // for messages: the path, or "stdin"
  AVFormatContext* format_ = nullptr;
  CodecContextPtr decoder_;
  SwsPtr sws_;
  PacketPtr packet_;
  FramePtr decoded_;
  VideoStreamInfo video_;
  std::vector<CopyStream> copy_streams_;
  std::vector<char> copy_by_index_;
  int last_incomplete_stream_ = -1;      // stream of the latest packet flagged corrupt
  int64_t packets_since_incomplete_ = 0;  // packets read after it
  AVDictionary* metadata_ = nullptr;

  int64_t start_us_ = INT64_MIN;  // absolute input time of --start
  int64_t end_us_ = INT64_MAX;    // absolute input time where --duration ends
  int64_t shift_us_ = 0;          // output times = input times - shift (the --start offset)
  int64_t frames_delivered_ = 0;
  int live_pipe_fd_ = -1;  // a live input pipe whose bytes' arrival is timed
  std::chrono::steady_clock::time_point input_ready_at_;
  std::optional<int64_t> awaited_keyframe_pts_;  // a segment's first keyframe, not yet read
  bool rewound_for_keyframe_ = false;
  int64_t last_video_end_ = -1;  // byte offset after the latest video packet
  int64_t last_pts_ = AV_NOPTS_VALUE;
  int64_t last_duration_ = 0;
  int64_t default_duration_ = 1;
  std::deque<FrameTime> video_frames_read_;
  int64_t video_frames_forgotten_before_ = INT64_MIN;
  int64_t latest_video_dts_ = AV_NOPTS_VALUE;
  int decode_errors_before_first_frame_ = 0;
  bool first_frame_seen_ = false;
  bool draining_ = false;     // flush packet sent
  bool finished_ = false;     // nothing more will be delivered
  bool stop_reading_ = false; // corrupt data or limits: drain, then finish
  bool packet_pending_ = false;  // packet_ still waits for the decoder
  bool logged_conversion_ = false;
  bool logged_corrupt_copy_ = false;
  Size last_size_;
  std::optional<std::string> data_error_;
  // Last members: they stop watching before the contexts go.
  std::unique_ptr<FfmpegLogWatch> decode_log_;
  std::unique_ptr<FfmpegLogWatch> log_watch_;  // the demuxer's error lines
};

}  // namespace sp
