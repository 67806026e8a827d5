#include "codecs/media_reader.h"

extern "C" {
#include <libavdevice/avdevice.h>
#include <libavutil/imgutils.h>
}

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <mutex>

#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace sp {

// ---- DecodedFrame / MediaItem ----

PlanarView DecodedFrame::view() const {
  PlanarView v;
  if (!frame) return v;
  v.format = format;
  v.width = frame->width;
  v.height = frame->height;
  v.on_device = frame->format == AV_PIX_FMT_CUDA;
  const int planes = plane_layout(format, v.width, v.height).count;
  for (int i = 0; i < planes; ++i) {
    v.plane[i] = frame->data[i];
    v.pitch[i] = static_cast<size_t>(frame->linesize[i]);
  }
  return v;
}

MediaItem::MediaItem(MediaItem&& other) noexcept
    : kind(other.kind), frame(std::move(other.frame)), packet(std::exchange(other.packet, nullptr)) {
  other.kind = Kind::end;
}

MediaItem& MediaItem::operator=(MediaItem&& other) noexcept {
  if (this != &other) {
    reset();
    kind = std::exchange(other.kind, Kind::end);
    frame = std::move(other.frame);
    packet = std::exchange(other.packet, nullptr);
  }
  return *this;
}

MediaItem::~MediaItem() { reset(); }

void MediaItem::reset() {
  kind = Kind::end;
  frame = DecodedFrame{};
  if (packet) av_packet_free(&packet);
}

// ---- MediaReader ----

namespace {

int interrupt_callback(void*) { return interrupted() ? 1 : 0; }

// FFmpeg's open reads its first bytes with a plain read(), which SIGINT
// does not end (the handler restarts system calls): a source that has sent
// nothing yet (an emulator not started) would hold Ctrl-C until it does.
// So wait for the first bytes here, where Ctrl-C is seen. False: interrupted.
bool wait_until_readable(int fd) {
  for (;;) {
    if (interrupted()) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, 50);
    if (r > 0 || (r < 0 && errno != EINTR)) return true;  // readable, at its end, or for open() to report
  }
}

bool is_device(const AVInputFormat* f) {
  if (!f || !f->priv_class) return false;
  const AVClassCategory c = f->priv_class->category;
  return c == AV_CLASS_CATEGORY_DEVICE_VIDEO_INPUT || c == AV_CLASS_CATEGORY_DEVICE_INPUT ||
         c == AV_CLASS_CATEGORY_DEVICE_AUDIO_INPUT;
}

std::string rate_text(double rate) {
  AVRational q = av_d2q(rate, 1000000);
  return std::to_string(q.num) + "/" + std::to_string(q.den);
}

// A live pipe of 64 KB takes a frame of 256x240 RGBA (240 KB) in four
// rounds of the source writing and us reading, each a wake-up; room for two
// frames lets the source write one whole.
void grow_live_pipe(int fd, const VideoStreamInfo& video) {
  const int frame_bytes = av_image_get_buffer_size(video.decoder_format, video.size.width, video.size.height, 1);
  if (frame_bytes > 0) grow_pipe(fd, 2 * size_t(frame_bytes));
}

}  // namespace

MediaReader::MediaReader(const InputOptions& options) : options_(options) {
  name_ = options_.url == "-" ? std::string("stdin") : options_.url;
  log_watch_ = std::make_unique<FfmpegLogWatch>();
  decode_log_ = std::make_unique<FfmpegLogWatch>();
  try {
    open_input();
    select_streams();
    fill_video_info();  // before the decoder: a short input (its frame count) decodes in software
    if (options_.decode_video) {
      open_decoder();
      video_.codec_name = decoder_->codec->name;
    }
    seek_to_start();
    if (live_pipe_fd_ >= 0) grow_live_pipe(live_pipe_fd_, video_);
  } catch (...) {
    release();  // a constructor that throws gets no destructor
    throw;
  }
  packet_ = make_packet();
  decoded_ = make_frame();
  log_watch_->take_errors();  // probing noise; only what happens while reading counts
}

MediaReader::~MediaReader() { release(); }

void MediaReader::release() {
  av_dict_free(&metadata_);
  for (CopyStream& c : copy_streams_) av_dict_free(&c.owned_metadata);
  log_watch_.reset();
  decode_log_.reset();
  decoder_.reset();
  avformat_close_input(&format_);
}

void MediaReader::close_decoder() {
  const bool keep = decoder_can_be_kept();
  finished_ = true;
  decode_log_.reset();  // stops watching before the context goes
  decoded_.reset();
  sws_.reset();
  if (keep)
    options_.kept_decoder->keep(std::move(decoder_), format_->streams[video_.stream_index]->codecpar, decoder_setup_);
  decoder_.reset();
}

const AVDictionary* MediaReader::metadata() const { return metadata_; }

void MediaReader::open_input() {
  static std::once_flag devices_once;
  std::call_once(devices_once, [] { avdevice_register_all(); });

  const AVInputFormat* forced = nullptr;
  if (!options_.format.empty()) {
    forced = av_find_input_format(options_.format.c_str());
    if (!forced) throw Error(ExitCode::usage, "-f " + options_.format + ": unknown input format");
  }
  const bool raw = forced && std::string(forced->name) == "rawvideo";
  if (raw && (!options_.size || options_.pixel_format.empty()))
    throw Error(ExitCode::usage, name_ + ": rawvideo input needs --size and --pix-fmt");
  AVDictionary* opts = nullptr;
  if (options_.size) {
    if (options_.size->width <= 0 || options_.size->height <= 0)
      throw Error(ExitCode::usage, name_ + ": input size must be positive");
    av_dict_set(&opts, "video_size",
                (std::to_string(options_.size->width) + "x" + std::to_string(options_.size->height)).c_str(), 0);
  }
  if (!options_.pixel_format.empty()) {
    if (av_get_pix_fmt(options_.pixel_format.c_str()) == AV_PIX_FMT_NONE)
      throw Error(ExitCode::usage, "--pix-fmt " + options_.pixel_format + ": unknown pixel format");
    av_dict_set(&opts, "pixel_format", options_.pixel_format.c_str(), 0);
  }
  if (options_.rate) {
    if (!(*options_.rate > 0)) throw Error(ExitCode::usage, name_ + ": input rate must be positive");
    av_dict_set(&opts, "framerate", rate_text(*options_.rate).c_str(), 0);
  }

  if (options_.url == "-" && !wait_until_readable(STDIN_FILENO)) {
    av_dict_free(&opts);
    throw Error(ExitCode::interrupted, name_ + ": interrupted before the input sent anything");
  }
  format_ = avformat_alloc_context();
  if (!format_) throw std::bad_alloc();
  format_->interrupt_callback = {interrupt_callback, nullptr};
  if (options_.low_latency) {
    // Probe only until the streams are described (0 would mean "default",
    // five seconds), and skip the frame-rate estimate.
    format_->max_analyze_duration = AV_TIME_BASE / 10;
    format_->fps_probe_size = 0;
  }
  log_watch_->watch(format_);
  const std::string url = options_.url == "-" ? std::string("pipe:0") : options_.url;
  if (options_.low_latency && options_.url == "-") live_pipe_fd_ = STDIN_FILENO;
  int r = avformat_open_input(&format_, url.c_str(), forced, &opts);  // frees format_ on failure
  av_dict_free(&opts);
  if (r < 0) {
    const std::string detail = strip_log_prefix(log_watch_->last_error());
    std::string message = name_ + ": " + av_error_text(r);
    if (!detail.empty() && detail.find(av_error_text(r)) == std::string::npos) message += " (" + detail + ")";
    if (r == AVERROR(ENOENT) || r == AVERROR(EACCES) || r == AVERROR(EISDIR) || r == AVERROR(ENOTDIR))
      throw Error(ExitCode::no_input, message);
    if (is_device(forced)) throw Error(ExitCode::unavailable, message);
    if (r == AVERROR_EXIT) throw Error(ExitCode::interrupted, name_ + ": interrupted while opening");
    throw Error(ExitCode::data_error, message);
  }
  // A rawvideo stream is fully described by the options; probing it would only
  // hold back the first frame of a live source.
  if (!(raw && options_.low_latency)) {
    r = avformat_find_stream_info(format_, nullptr);
    if (r < 0) throw Error(ExitCode::data_error, name_ + ": cannot read stream parameters: " + av_error_text(r));
  }
}

void MediaReader::select_streams() {
  int best = av_find_best_stream(format_, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (best >= 0 && (format_->streams[best]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
    for (unsigned i = 0; i < format_->nb_streams; ++i) {
      const AVStream* st = format_->streams[i];
      if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(st->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
        best = int(i);
        break;
      }
    }
  }
  if (best < 0) {
    const std::string format_name = format_->iformat ? format_->iformat->name : "?";
    throw Error(ExitCode::data_error, name_ + ": no video stream (read as " + format_name + ")");
  }
  video_.stream_index = best;
  av_dict_copy(&metadata_, format_->metadata, 0);
  copy_by_index_.assign(format_->nb_streams, 0);
  for (unsigned i = 0; i < format_->nb_streams; ++i) {
    AVStream* st = format_->streams[i];
    const AVMediaType type = st->codecpar->codec_type;
    if (int(i) == best) continue;
    if (!options_.window && (type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_SUBTITLE) && st->codecpar->codec_id != AV_CODEC_ID_NONE) {
      CopyStream c;
      c.index = int(i);
      // Own copies: the writer reads them on another thread while demuxing goes on.
      std::shared_ptr<AVCodecParameters> par(avcodec_parameters_alloc(),
                                             [](AVCodecParameters* p) { avcodec_parameters_free(&p); });
      if (!par || avcodec_parameters_copy(par.get(), st->codecpar) < 0) throw std::bad_alloc();
      c.codecpar = par.get();
      c.owned_codecpar = std::move(par);
      c.time_base = st->time_base;
      c.disposition = st->disposition;
      av_dict_copy(&c.owned_metadata, st->metadata, 0);
      c.metadata = c.owned_metadata;
      c.description = "stream #" + std::to_string(i) + " (" + avcodec_get_name(st->codecpar->codec_id) + " " +
                      av_get_media_type_string(type) + ")";
      copy_streams_.push_back(c);
      copy_by_index_[i] = 1;
    } else {
      st->discard = AVDISCARD_ALL;
      log_debug("{}: stream #{} ({} {}) is not used", name_, i, avcodec_get_name(st->codecpar->codec_id),
                av_get_media_type_string(type) ? av_get_media_type_string(type) : "unknown");
    }
  }
}

void MediaReader::open_decoder() {
  const AVStream* st = format_->streams[video_.stream_index];
  const bool hardware_allowed = hardware_decoding_allowed(st->codecpar);
  if (hardware_allowed && take_kept_decoder(st, true)) return;
  const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
  BufferRefPtr nvdec_device;
  if (const auto nvdec = hardware_allowed ? choose_hardware_decoder(st->codecpar) : std::nullopt) {
    codec = nvdec->decoder;
    nvdec_device.reset(nvdec->device);
  } else if (take_kept_decoder(st, false)) {
    return;
  }
  if (!codec)
    throw Error(ExitCode::unavailable,
                name_ + ": no decoder for " + avcodec_get_name(st->codecpar->codec_id) + " in this FFmpeg build");
  decoder_.reset(avcodec_alloc_context3(codec));
  if (!decoder_) throw std::bad_alloc();
  int r = avcodec_parameters_to_context(decoder_.get(), st->codecpar);
  if (r < 0) throw Error(ExitCode::data_error, name_ + ": bad video stream parameters: " + av_error_text(r));
  const DecoderSetup& setup = decoder_setup_ = decoder_setup(nvdec_device != nullptr);
  decoder_->pkt_timebase = setup.packet_time_base;
  decoder_->thread_count = setup.threads;
  decoder_->thread_type = setup.thread_type;
  decoder_->flags |= setup.flags;
  if (nvdec_device) {
    decoder_->hw_device_ctx = nvdec_device.release();
    nvdec_attached_ = true;
    decoder_->extra_hw_frames = setup.extra_hw_frames;
  }
  decoder_->opaque = decoder_.get();  // lets the log watch hear the frame threads
  decode_log_->watch(decoder_.get());
  r = avcodec_open2(decoder_.get(), codec, nullptr);
  if (r < 0)
    throw Error(ExitCode::data_error, name_ + ": cannot open the " + codec->name + " decoder: " + av_error_text(r));
}

DecoderSetup MediaReader::decoder_setup(bool nvdec) const {
  DecoderSetup setup;
  setup.packet_time_base = format_->streams[video_.stream_index]->time_base;
  setup.threads = options_.threads;  // 0: one per core
  // Frame threads each hold a frame back; a live source wants none held.
  setup.thread_type = options_.low_latency ? FF_THREAD_SLICE : (FF_THREAD_FRAME | FF_THREAD_SLICE);
  if (options_.low_latency) setup.flags = AV_CODEC_FLAG_LOW_DELAY;
  if (nvdec) {
    // NVDEC has at most 32 decode surfaces, and each frame thread would hold
    // some; the hardware does the decoding, so one thread feeds it.
    setup.threads = 1;
    setup.extra_hw_frames = options_.frames_held;
    setup.cuda_device = current_cuda_device();
  }
  return setup;
}

bool MediaReader::take_kept_decoder(const AVStream* stream, bool nvdec) {
  if (!options_.kept_decoder) return false;
  const DecoderSetup setup = decoder_setup(nvdec);
  decoder_ = options_.kept_decoder->take(stream->codecpar, setup);
  if (!decoder_) return false;
  decoder_setup_ = setup;
  decoder_was_kept_ = true;
  nvdec_attached_ = nvdec;
  decode_log_->watch(decoder_.get());
  return true;
}

// Kept only after a clean end: a decoder that met corrupt data, or one whose
// run stopped early (a failure elsewhere, Ctrl-C), may still hold pictures
// the next input must not see, or surfaces a failed run never gave back.
bool MediaReader::decoder_can_be_kept() const {
  return options_.kept_decoder && decoder_ && finished_ && !data_error_ && first_frame_seen_ && !nvdec_refused_ &&
         !options_.low_latency;
}

// Whether NVDEC may be tried: --hwdec allows it, the input is not short
// enough to decode in software, and the caller's gate lets it; otherwise the
// reason is kept for the stats.
bool MediaReader::hardware_decoding_allowed(const AVCodecParameters* stream) {
  software_reason_ = options_.software_decode_reason;
  if (options_.hwdec == HwDecode::none) return false;
  if (options_.hwdec == HwDecode::automatic && is_short_input()) {
    static std::once_flag said;
    if (stream->codec_id != AV_CODEC_ID_RAWVIDEO)  // nothing to decode there (decode_in_software)
      std::call_once(said, [&] { log_info("{}: decoding in software: {}", name_, options_.short_input_reason); });
    decode_in_software(stream, options_.short_input_reason, true);
    return false;
  }
  const std::optional<std::string> gate_refusal = options_.hardware_gate ? options_.hardware_gate() : std::nullopt;
  options_.hardware_gate = nullptr;  // asked once: what it refers to belongs to the caller's start-up
  // The gate's reasons (the CPU backend) were said where they arose.
  if (gate_refusal) decode_in_software(stream, *gate_refusal, true);
  return !gate_refusal;
}

// Whether the pictures to be read hold at most software_decode_up_to_pixels
// in all, by fill_video_info's frame count; an input of unknown length is not short.
bool MediaReader::is_short_input() const {
  if (options_.software_decode_up_to_pixels <= 0 || video_.frame_count_estimate <= 0) return false;
  const double pixels = double(video_.frame_count_estimate) * video_.size.width * video_.size.height;
  return pixels <= options_.software_decode_up_to_pixels;
}

// NVDEC's decoder and device for the stream, or nullopt (decoding in
// software) with the reason kept for the stats and said in one line.
std::optional<NvdecChoice> MediaReader::choose_hardware_decoder(const AVCodecParameters* stream) {
  NvdecChoice choice = choose_nvdec(stream);
  if (choice.decoder) return choice;
  decode_in_software(stream, choice.refusal, false);
  return std::nullopt;
}

void MediaReader::decode_in_software(const AVCodecParameters* stream, const std::string& why, bool said_elsewhere) {
  if (options_.hwdec == HwDecode::nvdec) throw Error(ExitCode::unavailable, name_ + ": --hwdec nvdec: " + why);
  software_reason_ = why;
  // Nothing to decode in rawvideo: not worth a line (the stats keep it).
  if (stream->codec_id != AV_CODEC_ID_RAWVIDEO && !said_elsewhere) log_info("{}: decoding in software: {}", name_, why);
}

void MediaReader::fill_video_info() {
  const AVStream* st = format_->streams[video_.stream_index];
  const AVCodecParameters* par = st->codecpar;
  video_.size = {par->width, par->height};
  const AVPixelFormat decoded = par->format >= 0 ? AVPixelFormat(par->format) : AV_PIX_FMT_YUV420P;
  video_.decoder_format = decoded;
  video_.format = nearest_supported(decoded);
  video_.color = color_from_tags(par->color_space, par->color_range, decoded, par->height);
  video_.primaries = par->color_primaries;
  video_.transfer = par->color_trc;
  video_.space = par->color_space;
  video_.time_base = st->time_base;
  video_.file_start_us = format_->start_time != AV_NOPTS_VALUE ? format_->start_time : 0;
  video_.sample_aspect_ratio = av_guess_sample_aspect_ratio(format_, const_cast<AVStream*>(st), nullptr);
  video_.codec_name = avcodec_get_name(par->codec_id);  // the decoder's own name once it is open

  AVRational rate = options_.rate ? av_d2q(*options_.rate, 1000000) : st->avg_frame_rate;
  if (rate.num <= 0 || rate.den <= 0) rate = st->r_frame_rate;
  if (rate.num <= 0 || rate.den <= 0) rate = av_guess_frame_rate(format_, const_cast<AVStream*>(st), nullptr);
  if (rate.num <= 0 || rate.den <= 0) rate = {25, 1};
  video_.frame_rate = rate;
  const AVRational r = st->r_frame_rate, a = st->avg_frame_rate;
  video_.variable_frame_rate_hint =
      r.num > 0 && a.num > 0 && r.den > 0 && a.den > 0 && std::fabs(av_q2d(r) - av_q2d(a)) > 0.01 * av_q2d(r);
  default_duration_ = std::max<int64_t>(1, av_rescale_q(1, av_inv_q(rate), st->time_base));

  double total = -1;
  if (st->duration != AV_NOPTS_VALUE && st->duration > 0) total = st->duration * av_q2d(st->time_base);
  else if (format_->duration != AV_NOPTS_VALUE && format_->duration > 0) total = format_->duration / double(AV_TIME_BASE);
  double duration = total;
  if (duration >= 0 && options_.start_seconds > 0) duration = std::max(0.0, duration - options_.start_seconds);
  if (options_.duration_seconds >= 0) duration = duration < 0 ? options_.duration_seconds
                                                              : std::min(duration, options_.duration_seconds);
  const bool whole_file = options_.start_seconds <= 0 && options_.duration_seconds < 0 && !options_.window;
  if (options_.window && duration >= 0) {
    const double file_start = format_->start_time != AV_NOPTS_VALUE ? format_->start_time / double(AV_TIME_BASE) : 0;
    const double tb = av_q2d(st->time_base);
    const double begin = options_.window->begin == INT64_MIN ? file_start : options_.window->begin * tb;
    const double end = options_.window->end == INT64_MAX ? file_start + total : options_.window->end * tb;
    duration = std::max(0.0, end - begin);
  }
  video_.duration_seconds = duration;
  int64_t count = -1;
  if (st->nb_frames > 0 && whole_file) count = st->nb_frames;
  else if (duration >= 0) count = std::llround(duration * av_q2d(rate));
  if (options_.max_frames >= 0) count = count < 0 ? options_.max_frames : std::min(count, options_.max_frames);
  video_.frame_count_estimate = count;
}

void MediaReader::seek_to_start() {
  const int64_t file_start = format_->start_time != AV_NOPTS_VALUE ? format_->start_time : 0;
  if (options_.start_seconds > 0) {
    shift_us_ = std::llround(options_.start_seconds * AV_TIME_BASE);
    start_us_ = file_start + shift_us_;
    const int r = avformat_seek_file(format_, -1, INT64_MIN, start_us_, start_us_, 0);
    if (r < 0)
      log_debug("{}: cannot seek ({}); reading from the beginning and dropping what comes before --start", name_,
                av_error_text(r));
    else if (decoder_)
      avcodec_flush_buffers(decoder_.get());
  }
  if (options_.window && options_.window->seek_pts) {
    // Some demuxers (MPEG-TS) land after the keyframe asked for: aim a second
    // early and drop video packets up to it.
    const int64_t early = av_rescale_q(AV_TIME_BASE, AV_TIME_BASE_Q, video_.time_base);
    const int r = av_seek_frame(format_, video_.stream_index, *options_.window->seek_pts - early, AVSEEK_FLAG_BACKWARD);
    if (r < 0)
      log_warning("{}: cannot seek to the segment's keyframe ({}); reading from the beginning", name_,
                  av_error_text(r));
    else if (decoder_)
      avcodec_flush_buffers(decoder_.get());
    awaited_keyframe_pts_ = options_.window->seek_pts;
  }
  if (options_.duration_seconds >= 0)
    end_us_ = file_start + shift_us_ + std::llround(options_.duration_seconds * AV_TIME_BASE);
}

// A live pipe: waits until the next bytes can be read, and notes when, so
// that the timeline tells the source's delivery from our reading. Bytes
// already buffered arrived earlier, at a moment not known: then it is now.
// False when Ctrl-C came first: a read() now would block until the source
// sends more, however long that takes.
bool MediaReader::wait_for_input() {
  const AVIOContext* pb = format_->pb;
  if (live_pipe_fd_ >= 0 && pb && pb->buf_ptr >= pb->buf_end) {
    pollfd p{live_pipe_fd_, POLLIN, 0};
    // The timeout only lets Ctrl-C through; data wakes the poll at once.
    for (;;) {
      if (interrupted()) return false;
      const int r = poll(&p, 1, 100);
      if (r > 0 || (r < 0 && errno != EINTR)) break;
    }
  }
  input_ready_at_ = std::chrono::steady_clock::now();
  return true;
}

// Drops the video packets before the segment's keyframe. Past it without
// meeting it, the seek landed late: read again from the start, once.
bool MediaReader::before_awaited_keyframe(const AVPacket* packet) {
  if (!awaited_keyframe_pts_) return false;
  const int64_t pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
  if (!(packet->flags & AV_PKT_FLAG_KEY) || pts == AV_NOPTS_VALUE || pts < *awaited_keyframe_pts_) return true;
  if (pts == *awaited_keyframe_pts_) {
    awaited_keyframe_pts_.reset();
    return false;
  }
  if (rewound_for_keyframe_)
    throw Error(ExitCode::data_error, fmt::format("{}: the segment's keyframe at pts {} is not in the file", name_,
                                                  *awaited_keyframe_pts_));
  log_debug("{}: the seek passed the segment's keyframe; reading from the start", name_);
  rewound_for_keyframe_ = true;
  const int64_t start = format_->start_time != AV_NOPTS_VALUE ? format_->start_time : 0;
  const int r = avformat_seek_file(format_, -1, INT64_MIN, start, start, 0);
  if (r < 0) throw Error(ExitCode::data_error, name_ + ": cannot seek back to the start: " + av_error_text(r));
  return true;
}

}  // namespace sp
