#include "codecs/media_writer.h"

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {

namespace {

bool is_named(const AVOutputFormat* f, const char* name) { return f && std::strcmp(f->name, name) == 0; }

// The ISO family writes variable frame rates faithfully, although FFmpeg
// does not flag it so.
bool is_mov_family(const AVOutputFormat* f) {
  for (const char* n : {"mp4", "mov", "ipod", "ismv", "3gp", "3g2", "psp", "f4v"})
    if (is_named(f, n)) return true;
  return false;
}

bool has_option(const AVCodec* encoder, const char* name, AVOptionType* type = nullptr) {
  if (!encoder->priv_class) return false;
  const AVClass* cls = encoder->priv_class;
  const AVOption* o = av_opt_find2(&cls, name, nullptr, 0, AV_OPT_SEARCH_FAKE_OBJ, nullptr);
  if (o && type) *type = o->type;
  return o != nullptr;
}

// MPEG-4 part 2 & co. store the time base in 16 bits.
bool short_time_base_codec(AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_MPEG4:
    case AV_CODEC_ID_H263:
    case AV_CODEC_ID_H263P:
    case AV_CODEC_ID_MSMPEG4V2:
    case AV_CODEC_ID_MSMPEG4V3:
    case AV_CODEC_ID_FLV1: return true;
    default: return false;
  }
}

bool qscale_codec(AVCodecID id) {
  return short_time_base_codec(id) || id == AV_CODEC_ID_MJPEG || id == AV_CODEC_ID_MPEG1VIDEO ||
         id == AV_CODEC_ID_MPEG2VIDEO;
}

void tag_colors(AVCodecContext* c, PixelFormat format, ColorSpec color, const VideoStreamInfo& input, int height) {
  c->color_range = to_av_range(color.range);
  const bool keeps_input_matrix = matrix_from_av(input.space) == color.matrix;
  if (is_rgb(format)) {
    c->colorspace = AVCOL_SPC_RGB;
    c->color_primaries = input.primaries;
    c->color_trc = input.transfer;
    return;
  }
  c->colorspace = keeps_input_matrix ? input.space : to_av_space(color.matrix, height);
  if (keeps_input_matrix && input.primaries != AVCOL_PRI_UNSPECIFIED) {
    c->color_primaries = input.primaries;
    c->color_trc = input.transfer;
    return;
  }
  switch (color.matrix) {
    case ColorMatrix::bt709:
      c->color_primaries = AVCOL_PRI_BT709;
      c->color_trc = AVCOL_TRC_BT709;
      break;
    case ColorMatrix::bt601:
      c->color_primaries = height == 576 ? AVCOL_PRI_BT470BG : AVCOL_PRI_SMPTE170M;
      c->color_trc = AVCOL_TRC_SMPTE170M;
      break;
    case ColorMatrix::bt2020:
      c->color_primaries = AVCOL_PRI_BT2020;
      c->color_trc = AVCOL_TRC_BT2020_10;
      break;
  }
}

}  // namespace

MediaWriter::MediaWriter(const OutputOptions& options, const VideoStreamInfo& input_video, Size output_size,
                         const MediaReader& reader)
    : MediaWriter(options, input_video, output_size, reader.copy_streams(), reader.metadata()) {}

MediaWriter::MediaWriter(const OutputOptions& options, const VideoStreamInfo& input_video, Size output_size,
                         const std::vector<CopyStream>& copy_streams, const AVDictionary* metadata)
    : options_(options), output_size_(output_size) {
  name_ = options_.url == "-" ? std::string("stdout") : options_.url;
  log_watch_ = std::make_unique<FfmpegLogWatch>();
  plan_ = plan_output(options_);
  if (output_size.width <= 0 || output_size.height <= 0)
    throw Error(ExitCode::internal, name_ + ": no output size");
  frame_ = make_frame();
  packet_ = make_packet();
  copy_packet_ = make_packet();
  try {
    choose_encoder();
    choose_picture_format(input_video);
    open_encoder(input_video);
    open_output(copy_streams, metadata, input_video);
  } catch (...) {
    close_output_after_failure();
    throw;
  }
  log_debug("{}: writing {}", name_, description());
}

MediaWriter::~MediaWriter() {
  if (!finished_) {
    try {
      finish();
    } catch (const std::exception& e) {
      log_warning("{}", e.what());
    }
  }
  log_watch_.reset();
  av_buffer_unref(&device_frames_);
  av_buffer_unref(&nvenc_device_);
  if (muxer_) {
    if (muxer_->pb && !(muxer_->oformat->flags & AVFMT_NOFILE)) avio_closep(&muxer_->pb);
    avformat_free_context(muxer_);
  }
}

void MediaWriter::warn(const std::string& message) {
  warnings_.push_back(message);
  log_warning("{}", message);
}

void MediaWriter::fail(ExitCode code, const std::string& what, int error) {
  std::string message = name_ + ": " + what + ": " + av_error_text(error);
  const std::string detail = strip_log_prefix(log_watch_->last_error());
  if (!detail.empty() && message.find(detail) == std::string::npos) message += " (" + detail + ")";
  throw Error(code, message);
}

// --encoder auto|nvenc: the codec's NVENC counterpart when it opens here.
void MediaWriter::choose_encoder() {
  if (options_.encoder == EncoderChoice::software || !plan_.encoder) return;
  const AVCodec* nvenc = nvenc_counterpart(plan_.encoder);
  std::optional<std::string> why;
  if (!nvenc) why = std::string("this FFmpeg has no NVENC encoder for ") + avcodec_get_name(plan_.encoder->id);
  else if (!options_.gpu_in_use) why = "the CPU backend is in use";
  else why = probe_nvenc(nvenc);
  if (!why) {
    plan_.encoder = nvenc;
    return;
  }
  if (options_.encoder == EncoderChoice::nvenc) throw Error(ExitCode::unavailable, name_ + ": --encoder nvenc: " + *why);
  encoder_fallback_reason_ = *why;
  if (nvenc && options_.gpu_in_use) log_info("{}: encoding with {}: {}", name_, plan_.encoder->name, *why);
}

// Opens the NVENC encoder once on the shared CUDA context; the reason when it
// does not open.
std::optional<std::string> MediaWriter::probe_nvenc(const AVCodec* nvenc) {
  int r = create_shared_cuda_device(&nvenc_device_);
  if (r < 0) return "no CUDA device for NVENC (" + av_error_text(r) + ")";
  CodecContextPtr probe(avcodec_alloc_context3(nvenc));
  if (!probe) throw std::bad_alloc();
  probe->width = std::max(256, output_size_.width & ~1);
  probe->height = std::max(256, output_size_.height & ~1);
  probe->pix_fmt = AV_PIX_FMT_YUV420P;
  probe->time_base = {1, 25};
  probe->hw_device_ctx = av_buffer_ref(nvenc_device_);
  log_watch_->watch(probe.get());
  r = avcodec_open2(probe.get(), nvenc, nullptr);
  const std::string line = strip_log_prefix(log_watch_->last_error());
  log_watch_->take_errors();  // the probe's complaints are not the output's
  if (r >= 0) return std::nullopt;
  av_buffer_unref(&nvenc_device_);
  return explain_nvenc_failure(r, line);
}

// NVENC reads the pipeline's output where the GPU made it. A picture with a
// cropped odd line stays on the host path: the surfaces must have the
// encoded size.
void MediaWriter::use_device_frames() {
  if (encoded_size_ != output_size_) {
    log_info("{}: {} takes pictures from host memory: {}x{} is cropped to even dimensions", name_,
             plan_.encoder->name, output_size_.width, output_size_.height);
    return;
  }
  int error = 0;
  device_frames_ = make_cuda_frames_pool(nvenc_device_, encoder_av_format_, output_size_.width, output_size_.height,
                                         &error);
  if (!device_frames_) {
    log_info("{}: {} takes pictures from host memory: CUDA frames of {} are unavailable ({})", name_,
             plan_.encoder->name, av_get_pix_fmt_name(encoder_av_format_), av_error_text(error));
    return;
  }
  AVCodecContext* c = encoder_.get();
  c->pix_fmt = AV_PIX_FMT_CUDA;
  c->hw_frames_ctx = av_buffer_ref(device_frames_);
  if (!c->hw_frames_ctx) throw std::bad_alloc();
  encoder_settings_ += " (device input)";
}

void MediaWriter::open_encoder(const VideoStreamInfo& input) {
  const AVCodec* codec = plan_.encoder;
  input_time_base_ = input.time_base;
  const AVOutputFormat* f = plan_.format;
  constant_rate_only_ = !(f->flags & (AVFMT_VARIABLE_FPS | AVFMT_NOTIMESTAMPS)) && !is_mov_family(f);
  AVRational rate = input.frame_rate.num > 0 ? input.frame_rate : AVRational{25, 1};
  encoder_time_base_ = constant_rate_only_ ? av_inv_q(rate) : input.time_base;
  if (short_time_base_codec(codec->id) && encoder_time_base_.den > 65535) {
    encoder_time_base_ = av_inv_q(rate);
    if (encoder_time_base_.den > 65535) encoder_time_base_ = {1, 1000};
  }

  encoder_.reset(avcodec_alloc_context3(codec));
  if (!encoder_) throw std::bad_alloc();
  AVCodecContext* c = encoder_.get();
  log_watch_->watch(c);
  c->width = encoded_size_.width;
  c->height = encoded_size_.height;
  c->pix_fmt = encoder_av_format_;
  c->time_base = encoder_time_base_;
  c->framerate = rate;
  if (output_size_ == input.size && input.sample_aspect_ratio.num > 0) c->sample_aspect_ratio = input.sample_aspect_ratio;
  tag_colors(c, encoder_format_, encoder_color_, input, encoded_size_.height);
  c->thread_count = 0;
  if (f->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;

  AVDictionary* opts = nullptr;
  AVOptionType type{};
  encoder_settings_.clear();
  if (has_option(codec, "crf")) {
    av_dict_set_int(&opts, "crf", options_.crf, 0);
    encoder_settings_ += " crf " + std::to_string(options_.crf);
  } else if (qscale_codec(codec->id)) {
    // crf 18 (visually lossless for x264) maps to q 3; each 6 crf steps ~ one q step.
    const int q = std::clamp((options_.crf + 2) / 6, 1, 31);
    c->flags |= AV_CODEC_FLAG_QSCALE;
    c->global_quality = FF_QP2LAMBDA * q;
    encoder_settings_ += " q " + std::to_string(q);
  }
  if (has_option(codec, "preset", &type) && type == AV_OPT_TYPE_STRING) {
    av_dict_set(&opts, "preset", options_.preset.c_str(), 0);
    encoder_settings_ += " preset " + options_.preset;
  }
  if (nvenc_device_) {
    c->hw_device_ctx = av_buffer_ref(nvenc_device_);
    set_nvenc_options(&opts, options_.crf, options_.preset, options_.low_latency, &encoder_settings_);
    use_device_frames();
  }
  if (codec->id == AV_CODEC_ID_FFV1) av_dict_set(&opts, "level", "3", 0);  // sliced: multithreaded, CRC-checked
  // Reordered frames break timing in two containers: AVI stores decode order
  // only (frames would play late by the reorder delay), and NUT cannot store
  // the negative decode times of the first reordered frames, so the muxer
  // would move every stream later by that delay.
  if (is_named(f, "avi") || is_named(f, "nut")) c->max_b_frames = 0;
  if (options_.low_latency) {
    if (has_option(codec, "tune", &type) && type == AV_OPT_TYPE_STRING &&
        (codec->id == AV_CODEC_ID_H264 || codec->id == AV_CODEC_ID_HEVC)) {
      av_dict_set(&opts, "tune", "zerolatency", 0);
      encoder_settings_ += " tune zerolatency";
    }
    c->max_b_frames = 0;
    c->flags |= AV_CODEC_FLAG_LOW_DELAY;
    c->thread_type = FF_THREAD_SLICE;  // frame threads hold pictures back
  }
  const int r = avcodec_open2(c, codec, &opts);
  const AVDictionaryEntry* unused = av_dict_get(opts, "", nullptr, AV_DICT_IGNORE_SUFFIX);
  if (r >= 0 && unused) log_debug("{}: {} ignored option {}", name_, codec->name, unused->key);
  av_dict_free(&opts);
  if (r < 0)
    fail(r == AVERROR(ENOMEM) ? ExitCode::internal : ExitCode::usage,
         std::string("cannot open the ") + codec->name + " encoder", r);
}

void MediaWriter::open_output(const std::vector<CopyStream>& copy_streams, const AVDictionary* metadata,
                              const VideoStreamInfo& input) {
  const AVOutputFormat* f = plan_.format;
  seekable_ = !plan_.to_pipe && (plan_.is_file || options_.url.rfind("file:", 0) == 0);
  struct stat st {};
  if (plan_.is_file && stat(options_.url.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
    seekable_ = false;
  // ADTS AAC (from transport streams) has no setup data until the first
  // packet; MP4 and Matroska need it in a header a pipe cannot go back to.
  const bool needs_setup_up_front = !seekable_ && (is_mov_family(f) || is_named(f, "matroska") || is_named(f, "webm"));
  std::vector<const CopyStream*> sure, unsure;
  for (const CopyStream& s : copy_streams) {
    const AVCodecID id = s.codecpar->codec_id;
    const AVMediaType type = s.codecpar->codec_type;
    const int accepted = avformat_query_codec(f, id, FF_COMPLIANCE_NORMAL);
    std::string why;
    if (type == AVMEDIA_TYPE_AUDIO && f->audio_codec == AV_CODEC_ID_NONE)
      why = std::string(f->name) + " carries no audio";
    else if (id == AV_CODEC_ID_AAC && s.codecpar->extradata_size == 0 && needs_setup_up_front && accepted != 0)
      why = std::string(f->name) + " to a pipe needs the AAC setup in its header, and ADTS input has it only in the "
            "packets (write a file, or use nut)";
    else if (type == AVMEDIA_TYPE_SUBTITLE && f->subtitle_codec == AV_CODEC_ID_NONE && accepted != 1)
      why = std::string(f->name) + " carries no subtitles";
    else if (accepted == 0)
      why = std::string(f->name) + " cannot carry " + avcodec_get_name(id);
    if (!why.empty()) {
      warn(s.description + " dropped: " + why);
      continue;
    }
    (accepted == 1 ? sure : unsure).push_back(&s);
  }
  std::vector<const CopyStream*> all = sure;
  all.insert(all.end(), unsure.begin(), unsure.end());
  int error = 0;
  if (try_open_output(all, metadata, input, unsure.empty(), &error)) return;
  for (const CopyStream* s : unsure)
    warn(s->description + " dropped: " + f->name + " refused it (" + av_error_text(error) + ")");
  try_open_output(sure, metadata, input, true, &error);
}

bool MediaWriter::try_open_output(const std::vector<const CopyStream*>& streams, const AVDictionary* metadata,
                                  const VideoStreamInfo& input, bool last_try, int* error) {
  int r = avformat_alloc_output_context2(&muxer_, plan_.format, nullptr, plan_.ffmpeg_url.c_str());
  if (r < 0 || !muxer_) fail(ExitCode::internal, "cannot set up the muxer", r);
  log_watch_->watch(muxer_);

  video_stream_ = avformat_new_stream(muxer_, nullptr);
  if (!video_stream_) throw std::bad_alloc();
  r = avcodec_parameters_from_context(video_stream_->codecpar, encoder_.get());
  if (r < 0) fail(ExitCode::internal, "cannot copy the encoder parameters", r);
  video_stream_->time_base = encoder_time_base_;
  video_stream_->avg_frame_rate = encoder_->framerate;
  video_stream_->sample_aspect_ratio = encoder_->sample_aspect_ratio;

  output_index_.clear();
  input_time_bases_.clear();
  for (const CopyStream* s : streams) {
    AVStream* st = avformat_new_stream(muxer_, nullptr);
    if (!st) throw std::bad_alloc();
    r = avcodec_parameters_copy(st->codecpar, s->codecpar);
    if (r < 0) fail(ExitCode::internal, "cannot copy stream parameters", r);
    // Keep the input's codec tag only where this container knows it for the codec.
    uint32_t tag = 0;
    const AVCodecTag* const* tags = muxer_->oformat->codec_tag;
    if (tags && av_codec_get_id(tags, st->codecpar->codec_tag) != st->codecpar->codec_id &&
        av_codec_get_tag2(tags, st->codecpar->codec_id, &tag))
      st->codecpar->codec_tag = 0;
    st->time_base = s->time_base;
    st->disposition = s->disposition;
    av_dict_copy(&st->metadata, s->metadata, 0);
    if (size_t(s->index) >= output_index_.size()) {
      output_index_.resize(s->index + 1, -1);
      input_time_bases_.resize(s->index + 1, AVRational{1, 1});
    }
    output_index_[s->index] = st->index;
    input_time_bases_[s->index] = s->time_base;
  }
  if (metadata) av_dict_copy(&muxer_->metadata, metadata, 0);

  AVDictionary* opts = nullptr;
  if (is_mov_family(plan_.format) && !seekable_)  // no index to write at the end: fragments
    av_dict_set(&opts, "movflags", "+frag_keyframe+empty_moov+default_base_moof", 0);
  if (plan_.single_image) av_dict_set(&opts, "update", "1", 0);
  if (options_.low_latency) muxer_->flush_packets = 1;

  if (!(plan_.format->flags & AVFMT_NOFILE)) {
    // Live output to a pipe: each packet in one write(), and a pipe that holds
    // two pictures, instead of 32 KB writes each waking the consumer.
    const bool live_pipe = options_.low_latency && plan_.ffmpeg_url == "pipe:1";
    if (live_pipe) grow_pipe(STDOUT_FILENO, 2 * plane_layout(encoder_format_, output_size_.width, output_size_.height).total_bytes());
    r = avio_open2(&muxer_->pb, plan_.ffmpeg_url.c_str(), AVIO_FLAG_WRITE | (live_pipe ? AVIO_FLAG_DIRECT : 0), nullptr,
                   nullptr);
    if (r < 0) {
      av_dict_free(&opts);
      fail(ExitCode::io_error, "cannot open for writing", r);
    }
    created_file_ = plan_.is_file;
  }
  r = avformat_init_output(muxer_, &opts);
  av_dict_free(&opts);
  if (r < 0) {
    if (!last_try) {
      *error = r;
      if (!(plan_.format->flags & AVFMT_NOFILE)) avio_closep(&muxer_->pb);
      avformat_free_context(muxer_);
      muxer_ = nullptr;
      return false;
    }
    const bool bad_combination = r == AVERROR(EINVAL) || r == AVERROR_INVALIDDATA || r == AVERROR_PATCHWELCOME ||
                                 r == AVERROR(ENOSYS);
    fail(bad_combination ? ExitCode::usage : ExitCode::io_error,
         std::string("cannot start the ") + plan_.format->name + " output", r);
  }
  r = avformat_write_header(muxer_, nullptr);
  if (r < 0) fail(ExitCode::io_error, "cannot write the header", r);
  (void)input;
  return true;
}

void MediaWriter::close_output_after_failure() {
  finished_ = true;
  if (muxer_) {
    if (muxer_->pb && !(muxer_->oformat->flags & AVFMT_NOFILE)) avio_closep(&muxer_->pb);
    avformat_free_context(muxer_);
    muxer_ = nullptr;
  }
  encoder_.reset();
  if (created_file_) {
    std::error_code ec;
    std::filesystem::remove(options_.url, ec);
  }
}

}  // namespace sp
