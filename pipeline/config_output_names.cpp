// Checks the FFmpeg names of the `output:` section while the config is read,
// so a misspelt encoder fails before any work starts, with a suggestion.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/config_values.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
}

namespace sp::config_detail {
namespace {

std::string with_suggestion(std::string problem, const std::string& name, const std::vector<std::string>& known) {
  if (std::string near = closest_match(name, known); !near.empty()) problem += " (did you mean '" + near + "'?)";
  return problem;
}

std::string check_codec(const std::string& name) {
  if (const AVCodec* codec = avcodec_find_encoder_by_name(name.c_str())) {
    if (codec->type == AVMEDIA_TYPE_VIDEO) return "";
    return fmt::format("'{}' is not a video encoder", name);
  }
  std::vector<std::string> known;
  void* it = nullptr;
  while (const AVCodec* c = av_codec_iterate(&it))
    if (av_codec_is_encoder(c) && c->type == AVMEDIA_TYPE_VIDEO) known.push_back(c->name);
  return with_suggestion(fmt::format("names no FFmpeg video encoder '{}'", name), name, known);
}

std::string check_pixel_format(const std::string& name) {
  if (av_get_pix_fmt(name.c_str()) != AV_PIX_FMT_NONE) return "";
  std::vector<std::string> known;
  for (const AVPixFmtDescriptor* d = av_pix_fmt_desc_next(nullptr); d; d = av_pix_fmt_desc_next(d))
    known.push_back(d->name);
  return with_suggestion(fmt::format("names no FFmpeg pixel format '{}'", name), name, known);
}

std::string check_format(const std::string& name) {
  if (av_guess_format(name.c_str(), nullptr, nullptr)) return "";
  std::vector<std::string> known;
  void* it = nullptr;
  while (const AVOutputFormat* f = av_muxer_iterate(&it)) {
    // short_name may list several names: "mov,mp4,m4a".
    std::string names = f->name;
    for (size_t start = 0, comma; start <= names.size(); start = comma + 1) {
      comma = names.find(',', start);
      if (comma == std::string::npos) comma = names.size();
      if (comma > start) known.push_back(names.substr(start, comma - start));
    }
  }
  return with_suggestion(fmt::format("names no FFmpeg container format '{}'", name), name, known);
}

}  // namespace

std::string check_output_name(const std::string& field, const std::string& name) {
  if (name.empty()) return "";  // "" asks for the automatic choice
  if (field == "codec") return check_codec(name);
  if (field == "pixel_format") return check_pixel_format(name);
  if (field == "format") return check_format(name);
  return "";
}

}  // namespace sp::config_detail
