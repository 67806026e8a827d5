#include "codecs/media_writer.h"
#include "codecs/muxer.h"
#include "codecs/muxer_names.h"

extern "C" {
#include <libavutil/opt.h>
}

#include <algorithm>
#include <climits>

#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {

namespace {

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

bool container_keeps_constant_rate(const AVOutputFormat* format) {
  return !(format->flags & (AVFMT_VARIABLE_FPS | AVFMT_NOTIMESTAMPS)) && !is_mov_family(format);
}

bool container_keeps_reordering(const AVOutputFormat* format) {
  return !is_named(format, "avi") && !is_named(format, "nut");
}

AVRational writer_video_time_base(const AVOutputFormat* format, AVCodecID codec, AVRational input_time_base,
                                  AVRational frame_rate) {
  const AVRational rate = frame_rate.num > 0 && frame_rate.den > 0 ? frame_rate : AVRational{25, 1};
  AVRational time_base = container_keeps_constant_rate(format) ? av_inv_q(rate) : input_time_base;
  if (short_time_base_codec(codec) && time_base.den > 65535) {
    time_base = av_inv_q(rate);
    if (time_base.den > 65535) time_base = {1, 1000};
  }
  return time_base;
}

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
  try {
    choose_encoder();
    choose_picture_format(input_video);
    open_encoder(input_video);
    open_output(copy_streams, metadata);
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
  muxer_.reset();
}

int64_t MediaWriter::packets_copied() const { return muxer_ ? muxer_->packets_copied() : 0; }

void MediaWriter::open_output(const std::vector<CopyStream>& copy_streams, const AVDictionary* metadata) {
  std::unique_ptr<AVCodecParameters, void (*)(AVCodecParameters*)> parameters(
      avcodec_parameters_alloc(), [](AVCodecParameters* p) { avcodec_parameters_free(&p); });
  if (!parameters) throw std::bad_alloc();
  const int r = avcodec_parameters_from_context(parameters.get(), encoder_.get());
  if (r < 0) fail(ExitCode::internal, "cannot copy the encoder parameters", r);
  MuxerOptions o;
  o.plan = plan_;
  // A file appears under its name only once it plays: an existing one stays
  // as it was until then, and a run that fails first leaves it untouched. A
  // live recording is written where it is watched, packet by packet, and a
  // device or FIFO where it is.
  writes_temporary_ = plan_.is_file && !plan_.image_sequence && !options_.low_latency &&
                      !written_in_place(plan_.ffmpeg_url);
  if (writes_temporary_) o.plan.ffmpeg_url = temporary_output_path(plan_.ffmpeg_url);
  o.name = name_;
  o.low_latency = options_.low_latency;
  o.live_pipe_bytes = 2 * plane_layout(encoder_format_, output_size_.width, output_size_.height).total_bytes();
  o.metadata_tags = options_.metadata_tags;
  AVRational offset{0, 1};
  const int64_t offset_ticks = segment_reorder_delay_ + segment_time_shift_;
  if (!av_reduce(&offset.num, &offset.den, offset_ticks * encoder_time_base_.num, encoder_time_base_.den, INT_MAX))
    throw Error(ExitCode::internal, name_ + ": the timestamp offset is no exact fraction of a second");
  const MuxedVideo video{parameters.get(), encoder_time_base_, encoder_->framerate, encoder_->sample_aspect_ratio, offset};
  muxer_ = std::make_unique<Muxer>(o, video, copy_streams, metadata);
  for (const std::string& w : muxer_->warnings()) warnings_.push_back(w);
}

void MediaWriter::close_output_after_failure() {
  finished_ = true;
  if (muxer_) muxer_->discard();
  muxer_.reset();
  encoder_.reset();
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

void MediaWriter::open_encoder(const VideoStreamInfo& input) {
  const AVCodec* codec = plan_.encoder;
  input_time_base_ = input.time_base;
  const AVOutputFormat* f = plan_.format;
  constant_rate_only_ = container_keeps_constant_rate(f);
  const AVRational rate = input.frame_rate.num > 0 ? input.frame_rate : AVRational{25, 1};
  encoder_time_base_ = writer_video_time_base(f, codec->id, input.time_base, rate);

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
  c->thread_count = options_.threads;
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
  const bool segment_keeps_b_frames = options_.segment_keeps_b_frames && is_named(f, "nut");
  if (!container_keeps_reordering(f) && !segment_keeps_b_frames) c->max_b_frames = 0;
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
  if (segment_keeps_b_frames) segment_reorder_delay_ = c->has_b_frames;
  // No frame comes before the input's start: moved later by as much as that
  // lies below zero, none is negative.
  if (options_.segment && is_named(f, "nut")) {
    const int64_t start = av_rescale_q_rnd(input.file_start_us, AV_TIME_BASE_Q, encoder_time_base_, AV_ROUND_DOWN);
    segment_time_shift_ = std::max<int64_t>(0, -start);
  }
}

}  // namespace sp
