#include "codecs/video_parameters_tag.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>

#include "codecs/ffmpeg_util.h"
#include "pipeline/errors.h"

namespace sp {
namespace {

struct Field {
  const char* name;
  int64_t (*get)(const AVCodecParameters&);
  void (*set)(AVCodecParameters&, int64_t);
};

#define SP_FIELD(member, type)                                                    \
  Field {                                                                         \
    #member, [](const AVCodecParameters& p) { return int64_t(p.member); },        \
        [](AVCodecParameters& p, int64_t v) { p.member = static_cast<type>(v); } \
  }

// Everything an encoder sets in AVCodecParameters that NUT's header leaves out.
const Field kFields[] = {
    SP_FIELD(format, int),  // the pixel format: known without decoding a picture
    SP_FIELD(bit_rate, int64_t),
    SP_FIELD(bits_per_coded_sample, int),
    SP_FIELD(bits_per_raw_sample, int),
    SP_FIELD(profile, int),
    SP_FIELD(level, int),
    SP_FIELD(field_order, AVFieldOrder),
    SP_FIELD(color_range, AVColorRange),
    SP_FIELD(color_primaries, AVColorPrimaries),
    SP_FIELD(color_trc, AVColorTransferCharacteristic),
    SP_FIELD(color_space, AVColorSpace),
    SP_FIELD(chroma_location, AVChromaLocation),
    SP_FIELD(video_delay, int),
};

#undef SP_FIELD

}  // namespace

void tag_video_parameters(const AVCodecParameters& parameters, AVDictionary** stream_metadata) {
  std::string text;
  for (const Field& f : kFields) text += fmt::format("{}{}={}", text.empty() ? "" : " ", f.name, f.get(parameters));
  if (av_dict_set(stream_metadata, kVideoParametersTag, text.c_str(), 0) < 0) throw std::bad_alloc();
}

bool restore_video_parameters(const AVDictionary* stream_metadata, AVCodecParameters* parameters) {
  const AVDictionaryEntry* tag = av_dict_get(stream_metadata, kVideoParametersTag, nullptr, 0);
  if (!tag) return false;
  AVDictionary* values = nullptr;
  const int r = av_dict_parse_string(&values, tag->value, "=", " ", 0);
  std::unique_ptr<AVDictionary*, void (*)(AVDictionary**)> owner(&values, av_dict_free);
  if (r < 0) throw Error(ExitCode::data_error, fmt::format("unreadable {} tag '{}': {}", kVideoParametersTag, tag->value, av_error_text(r)));
  AVCodecParameters restored = *parameters;  // plain fields only: extradata is neither read nor freed here
  for (const Field& f : kFields) {
    const AVDictionaryEntry* value = av_dict_get(values, f.name, nullptr, 0);
    int64_t number = 0;
    const char* end = value ? value->value + std::strlen(value->value) : nullptr;
    if (!value || std::from_chars(value->value, end, number).ptr != end)
      throw Error(ExitCode::data_error, fmt::format("{} tag '{}' has no number for {}", kVideoParametersTag, tag->value, f.name));
    f.set(restored, number);
  }
  *parameters = restored;
  return true;
}

void tag_timestamp_offset(AVRational seconds, AVDictionary** stream_metadata) {
  const std::string text = fmt::format("{}/{}", seconds.num, seconds.den);
  if (av_dict_set(stream_metadata, kTimestampOffsetTag, text.c_str(), 0) < 0) throw std::bad_alloc();
}

int64_t tagged_timestamp_offset(const AVDictionary* stream_metadata, AVRational time_base) {
  const AVDictionaryEntry* tag = av_dict_get(stream_metadata, kTimestampOffsetTag, nullptr, 0);
  if (!tag) return 0;
  const char* text = tag->value;
  const char* end = text + std::strlen(text);
  int64_t num = 0, den = 0;
  const auto [slash, num_error] = std::from_chars(text, end, num);
  const bool read = num_error == std::errc() && slash != end && *slash == '/' &&
                    std::from_chars(slash + 1, end, den).ptr == end;
  if (!read || num < 0 || den <= 0 || num > INT32_MAX || den > INT32_MAX)
    throw Error(ExitCode::data_error, fmt::format("unreadable {} tag '{}'", kTimestampOffsetTag, text));
  // num/den seconds in ticks of time_base: num * tb.den / (den * tb.num), each product within 63 bits.
  const int64_t scaled = num * time_base.den, tick = den * time_base.num;
  if (tick <= 0 || scaled % tick != 0)
    throw Error(ExitCode::data_error, fmt::format("{} tag '{}' is no whole number of ticks of {}/{} s",
                                                  kTimestampOffsetTag, text, time_base.num, time_base.den));
  return scaled / tick;
}

}  // namespace sp
