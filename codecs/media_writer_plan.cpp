// Output planning: container, encoder, picture format and colour, and the
// checks made before any work starts.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "codecs/media_writer.h"
#include "codecs/muxer_names.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {

namespace {

namespace fs = std::filesystem;

const char* kX264Presets[] = {"ultrafast", "superfast", "veryfast", "faster", "fast",
                              "medium",    "slow",      "slower",   "veryslow", "placebo"};

std::string muxer_name(const std::string& name) {
  if (name == "mkv") return "matroska";
  if (name == "y4m") return "yuv4mpegpipe";
  if (name == "raw") return "rawvideo";
  return name;
}

bool is_image_muxer(const AVOutputFormat* f) { return is_named(f, "image2") || is_named(f, "image2pipe"); }

const AVCodec* default_encoder(const AVOutputFormat* format, const std::string& url) {
  if (is_image_muxer(format)) {
    const AVCodecID id = av_guess_codec(format, nullptr, url.c_str(), nullptr, AVMEDIA_TYPE_VIDEO);
    return avcodec_find_encoder(id != AV_CODEC_ID_NONE ? id : AV_CODEC_ID_PNG);
  }
  if (is_named(format, "yuv4mpegpipe") || is_named(format, "rawvideo"))
    return avcodec_find_encoder(AV_CODEC_ID_RAWVIDEO);
  if (avformat_query_codec(format, AV_CODEC_ID_H264, FF_COMPLIANCE_NORMAL) == 1)
    if (const AVCodec* x264 = avcodec_find_encoder_by_name("libx264")) return x264;
  return avcodec_find_encoder(format->video_codec);
}

std::string first_output_file(const OutputPlan& plan, const std::string& url) {
  if (!plan.image_sequence) return url;
  char name[4096];
  if (av_get_frame_filename2(name, sizeof(name), url.c_str(), 1, 0) < 0) return url;
  return name;
}

}  // namespace

void check_output_path(const std::string& url, const OutputPlan& plan, bool overwrite) {
  const fs::path file = first_output_file(plan, url);
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) throw Error(ExitCode::io_error, url + ": is a directory");
    if (!overwrite) throw Error(ExitCode::usage, file.string() + ": exists; use -y to overwrite it");
    if (access(file.c_str(), W_OK) != 0)
      throw Error(ExitCode::io_error, file.string() + ": cannot overwrite: " + std::strerror(errno));
    return;
  }
  fs::path dir = file.parent_path();
  if (dir.empty()) dir = ".";
  const fs::file_status dir_status = fs::status(dir, ec);
  if (!fs::exists(dir_status))
    throw Error(ExitCode::io_error, url + ": cannot write: directory " + dir.string() + " does not exist");
  if (!fs::is_directory(dir_status))
    throw Error(ExitCode::io_error, url + ": cannot write: " + dir.string() + " is not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(ExitCode::io_error, url + ": cannot write in " + dir.string() + ": " + std::strerror(errno));
}

namespace {

// The encoder's pixel formats, or null where it takes any. FFmpeg 7.1 (libavcodec
// 61.13) deprecates AVCodec::pix_fmts for avcodec_get_supported_config, and 8 removes it.
const AVPixelFormat* encoder_pixel_formats(const AVCodec* encoder) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(61, 13, 100)
  const void* formats = nullptr;
  int count = 0;
  const int status = avcodec_get_supported_config(nullptr, encoder, AV_CODEC_CONFIG_PIX_FORMAT, 0, &formats, &count);
  if (status < 0)
    throw Error(ExitCode::internal, std::string("the pixel formats of encoder ") + encoder->name + ": " +
                                        av_error_text(status));
  return static_cast<const AVPixelFormat*>(formats);
#else
  return encoder->pix_fmts;
#endif
}

bool encoder_takes(const AVCodec* encoder, AVPixelFormat format) {
  const AVPixelFormat* formats = encoder_pixel_formats(encoder);
  if (!formats) return true;
  for (const AVPixelFormat* p = formats; *p != AV_PIX_FMT_NONE; ++p)
    if (*p == format) return true;
  return false;
}

// y4m carries planar YUV and gray only; QuickTime knows raw RGB(A) but no
// raw planar YUV.
bool muxer_takes(const AVOutputFormat* format, AVCodecID codec, PixelFormat picture) {
  if (is_named(format, "yuv4mpegpipe"))
    return picture == PixelFormat::yuv420p || picture == PixelFormat::yuv444p || picture == PixelFormat::gray;
  if (is_mov_family(format) && codec == AV_CODEC_ID_RAWVIDEO)
    return picture == PixelFormat::rgb24 || picture == PixelFormat::rgba;
  return true;
}

const PixelFormat kAllFormats[] = {PixelFormat::yuv420p, PixelFormat::yuv444p, PixelFormat::nv12,
                                   PixelFormat::p010,    PixelFormat::rgba,    PixelFormat::rgb24,
                                   PixelFormat::bgr0,    PixelFormat::gray};

// The FFmpeg format handed to `encoder` for `picture`: the picture's twin, or
// its full-range yuvj twin for encoders that only take those.
AVPixelFormat encoder_av_format(const AVCodec* encoder, PixelFormat picture) {
  const AVPixelFormat twin = to_av(picture);
  if (encoder_takes(encoder, twin)) return twin;
  const AVPixelFormat jpeg = picture == PixelFormat::yuv420p   ? AV_PIX_FMT_YUVJ420P
                             : picture == PixelFormat::yuv444p ? AV_PIX_FMT_YUVJ444P
                                                               : AV_PIX_FMT_NONE;
  if (jpeg != AV_PIX_FMT_NONE && encoder_takes(encoder, jpeg)) return jpeg;
  return AV_PIX_FMT_NONE;
}

bool usable(const OutputPlan& plan, PixelFormat picture) {
  return encoder_av_format(plan.encoder, picture) != AV_PIX_FMT_NONE &&
         muxer_takes(plan.format, plan.encoder->id, picture);
}

}  // namespace

OutputPlan plan_container(const std::string& url, const std::string& format) {
  OutputPlan plan;
  if (url.empty()) throw Error(ExitCode::usage, "no output given (-o FILE, or -o - for stdout)");
  plan.to_pipe = url == "-" || url == "pipe:" || url.rfind("pipe:", 0) == 0;
  plan.ffmpeg_url = url == "-" ? std::string("pipe:1") : url;
  plan.is_file = !plan.to_pipe && url.find("://") == std::string::npos;
  if (!format.empty()) {
    plan.format = av_guess_format(muxer_name(format).c_str(), nullptr, nullptr);
    if (!plan.format) throw Error(ExitCode::usage, "-f " + format + ": unknown output format");
  } else if (plan.to_pipe) {
    throw Error(ExitCode::usage, "-o -: name the container with -f (nut, matroska, rawvideo, yuv4mpegpipe, ...)");
  } else {
    plan.format = av_guess_format(nullptr, url.c_str(), nullptr);
    if (!plan.format)
      throw Error(ExitCode::usage, url + ": cannot tell the container from the name; give it with -f");
  }
  if (is_named(plan.format, "image2")) {
    plan.image_sequence = av_filename_number_test(url.c_str()) != 0;
    plan.single_image = !plan.image_sequence;
  }
  return plan;
}

OutputPlan plan_output(const OutputOptions& options) {
  OutputPlan plan = plan_container(options.url, options.format);
  const std::string& url = options.url;
  if (options.codec.empty()) {
    plan.encoder = default_encoder(plan.format, url);
    if (!plan.encoder)
      throw Error(ExitCode::unavailable, std::string("no video encoder available for ") + plan.format->name);
  } else {
    plan.encoder = avcodec_find_encoder_by_name(options.codec.c_str());
    if (!plan.encoder) {
      const AVCodecDescriptor* d = avcodec_descriptor_get_by_name(options.codec.c_str());
      if (d) plan.encoder = avcodec_find_encoder(d->id);
      if (!plan.encoder && d)
        throw Error(ExitCode::unavailable, "--codec " + options.codec + ": this FFmpeg build cannot encode it");
      if (!plan.encoder) throw Error(ExitCode::usage, "--codec " + options.codec + ": unknown encoder");
    }
  }
  const std::string codec = plan.encoder->name;
  if (plan.encoder->type != AVMEDIA_TYPE_VIDEO)
    throw Error(ExitCode::usage, "--codec " + codec + ": not a video encoder");
  const int accepted = avformat_query_codec(plan.format, plan.encoder->id, FF_COMPLIANCE_NORMAL);
  const bool y4m = is_named(plan.format, "yuv4mpegpipe");
  if (accepted == 0 || (y4m && plan.encoder->id != AV_CODEC_ID_RAWVIDEO && plan.encoder->id != AV_CODEC_ID_WRAPPED_AVFRAME))
    throw Error(ExitCode::usage, std::string(plan.format->name) + " cannot carry " + codec + " video");
  // FFmpeg 5's y4m muxer takes raw pictures only as wrapped frames (later
  // versions take both).
  if (y4m && plan.encoder->id == AV_CODEC_ID_RAWVIDEO)
    if (const AVCodec* wrapped = avcodec_find_encoder(AV_CODEC_ID_WRAPPED_AVFRAME)) plan.encoder = wrapped;

  if (codec == "libx264") {
    if (options.crf < 0 || options.crf > 51)
      throw Error(ExitCode::usage, "--crf " + std::to_string(options.crf) + ": libx264 takes 0 to 51");
    bool known = false;
    for (const char* p : kX264Presets) known |= options.preset == p;
    if (!known)
      throw Error(ExitCode::usage, "--preset " + options.preset +
                                       ": libx264 takes ultrafast, superfast, veryfast, faster, fast, medium, slow, "
                                       "slower, veryslow or placebo");
  }
  if (!options.pixel_format.empty()) {
    const auto f = parse_pixel_format_name(options.pixel_format);
    if (!f)
      throw Error(ExitCode::usage, "--pix-fmt " + options.pixel_format +
                                       ": the pipeline writes rgba, bgr0, rgb24, gray, yuv420p, yuv444p, nv12 or p010");
    if (!usable(plan, *f))
      throw Error(ExitCode::usage, "--pix-fmt " + options.pixel_format + ": " + codec + " in " + plan.format->name +
                                       " cannot take it");
  }
  return plan;
}

void MediaWriter::preflight(const OutputOptions& options) {
  const OutputPlan plan = plan_output(options);
  if (plan.is_file) check_output_path(options.url, plan, options.overwrite);
}

// Picture format: 4:2:0 for the H.264 family, yuv444p for FFV1 (bgr0 for RGB
// input: lossless), rgba/rgb24 for PNG, the input's own layout for rawvideo;
// anything else gets the encoder's best match for the input.
void MediaWriter::choose_picture_format(const VideoStreamInfo& input) {
  const AVCodecID id = plan_.encoder->id;
  std::vector<PixelFormat> wishes;
  if (!options_.pixel_format.empty()) {
    wishes.push_back(*parse_pixel_format_name(options_.pixel_format));
  } else if (id == AV_CODEC_ID_FFV1) {
    wishes = {is_rgb(input.format) ? PixelFormat::bgr0 : PixelFormat::yuv444p};
  } else if (id == AV_CODEC_ID_PNG) {
    wishes = {input.format == PixelFormat::rgba ? PixelFormat::rgba : PixelFormat::rgb24};
  } else if (id == AV_CODEC_ID_RAWVIDEO || id == AV_CODEC_ID_WRAPPED_AVFRAME) {
    const PixelFormat rgb = input.format == PixelFormat::rgba ? PixelFormat::rgba : PixelFormat::rgb24;
    wishes = {input.format, is_rgb(input.format) ? PixelFormat::yuv444p : PixelFormat::yuv420p, rgb,
              PixelFormat::rgba};
  } else if (id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC || id == AV_CODEC_ID_MPEG4) {
    wishes = {PixelFormat::yuv420p};
  }
  bool chosen = false;
  for (PixelFormat f : wishes)
    if (!chosen && usable(plan_, f)) {
      encoder_format_ = f;
      encoder_av_format_ = encoder_av_format(plan_.encoder, f);
      chosen = true;
    }
  if (!chosen) {
    std::vector<AVPixelFormat> candidates;
    for (PixelFormat f : kAllFormats)
      if (usable(plan_, f)) candidates.push_back(to_av(f));
    if (candidates.empty())
      throw Error(ExitCode::unavailable, std::string(plan_.encoder->name) +
                                             " takes no picture format the pipeline can produce");
    candidates.push_back(AV_PIX_FMT_NONE);
    const AVPixelFormat best =
        avcodec_find_best_pix_fmt_of_list(candidates.data(), to_av(input.format), input.format == PixelFormat::rgba,
                                          nullptr);
    encoder_format_ = *from_av_exact(best);
    encoder_av_format_ = encoder_av_format(plan_.encoder, encoder_format_);
  }

  // Colour: YUV keeps the input's matrix and range; RGB input becomes limited
  // range with the usual matrix for the output height; yuvj means full range.
  const int height = output_size_.height;
  ColorSpec c = input.color;
  if (is_rgb(encoder_format_)) {
    c.range = ColorRange::full;
  } else if (is_rgb(input.format) || input.format == PixelFormat::gray) {
    c.matrix = height <= 576 ? ColorMatrix::bt601 : ColorMatrix::bt709;
    c.range = encoder_format_ == PixelFormat::gray ? ColorRange::full : ColorRange::limited;
  }
  if (is_jpeg_range_format(encoder_av_format_)) {
    c.range = ColorRange::full;
    c.matrix = ColorMatrix::bt601;
  }
  encoder_color_ = c;

  // 4:2:0 in the block-based codecs needs even dimensions: drop the odd line.
  encoded_size_ = output_size_;
  const bool subsampled = encoder_format_ == PixelFormat::yuv420p || encoder_format_ == PixelFormat::nv12 ||
                          encoder_format_ == PixelFormat::p010;
  if (subsampled && id != AV_CODEC_ID_RAWVIDEO && id != AV_CODEC_ID_WRAPPED_AVFRAME && id != AV_CODEC_ID_FFV1) {
    encoded_size_.width &= ~1;
    encoded_size_.height &= ~1;
    if (encoded_size_ != output_size_)
      warn(std::string(plan_.encoder->name) + " needs even dimensions for " + to_string(encoder_format_) + ": " +
           std::to_string(output_size_.width) + "x" + std::to_string(output_size_.height) + " is cropped to " +
           std::to_string(encoded_size_.width) + "x" + std::to_string(encoded_size_.height));
  }
  if (encoded_size_.width <= 0 || encoded_size_.height <= 0)
    throw Error(ExitCode::usage, name_ + ": output size " + std::to_string(output_size_.width) + "x" +
                                     std::to_string(output_size_.height) + " is too small for " + plan_.encoder->name);
}

}  // namespace sp
