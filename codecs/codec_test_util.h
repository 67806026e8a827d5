#pragma once
// Test helpers for the codecs tests (header-only: a non-test .cpp here would
// land in the core library). Clips are made with the ffmpeg CLI; outputs are
// checked with ffprobe/ffmpeg and with libavformat directly, never with the
// code under test.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/md5.h>
#include <libswscale/swscale.h>
}

#include "codecs/ffmpeg_util.h"
#include "codecs/media_reader.h"
#include "codecs/media_writer.h"
#include "tests/support/test_support.h"

namespace sp::codec_test {

struct CommandOutput {
  int code = -1;
  std::string output;
};

// Runs a shell command; `output` has stdout and, unless stdout_only, stderr.
// Reader options for a file with everything else left at the defaults.
inline InputOptions input(const std::string& url) {
  InputOptions o;
  o.url = url;
  return o;
}

inline CommandOutput run(const std::string& command, bool stdout_only = false) {
  CommandOutput r;
  FILE* p = popen((command + (stdout_only ? " 2>/dev/null" : " 2>&1")).c_str(), "r");
  if (!p) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), p)) > 0) r.output.append(buffer, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sp-codecs-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    if (std::getenv("SP_KEEP_TEMP")) return;  // for looking at a failure
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
};

inline uint64_t seed_for(const std::string& what) { return test::fresh_seed() ^ std::hash<std::string>{}(what); }

// Whether the ffmpeg on the PATH has the noise filter (the lent GPU
// machine's static FFmpeg has a minimal filter set: crop, format, scale).
inline bool ffmpeg_has_noise_filter() {
  static const bool has = [] {
    std::istringstream lines(run("ffmpeg -hide_banner -filters", true).output);
    for (std::string flags, name, rest; lines >> flags >> name && std::getline(lines, rest);)
      if (name == "noise") return true;
    return false;
  }();
  return has;
}

// testsrc2 (a real moving picture) with seeded temporal noise on top, so every
// run encodes different pictures. Without the noise filter: a seeded window of
// a larger testsrc2, which still differs from run to run.
inline std::string picture_source(const std::string& size, int rate, const std::string& what) {
  const uint64_t seed = seed_for(what) % 100000;
  if (!ffmpeg_has_noise_filter()) {
    const size_t x = size.find('x');
    const int w = std::stoi(size.substr(0, x)), h = std::stoi(size.substr(x + 1));
    const int dx = 2 * int(seed % 32), dy = 2 * int(seed / 32 % 32);
    return "-f lavfi -i \"testsrc2=size=" + std::to_string(w + 64) + "x" + std::to_string(h + 64) +
           ":rate=" + std::to_string(rate) + ",crop=" + size.substr(0, x) + ":" + size.substr(x + 1) + ":" +
           std::to_string(dx) + ":" + std::to_string(dy) + "\"";
  }
  return "-f lavfi -i \"testsrc2=size=" + size + ":rate=" + std::to_string(rate) +
         ",noise=alls=12:allf=t+u:all_seed=" + std::to_string(seed) + "\"";
}

inline std::string tone_source(const std::string& what) {
  return "-f lavfi -i \"sine=frequency=" + std::to_string(200 + seed_for(what) % 800) + ":sample_rate=44100\"";
}

inline void ffmpeg(const std::string& args) {
  const CommandOutput r = run("ffmpeg -nostdin -hide_banner -v error -y " + args);
  ASSERT_EQ(r.code, 0) << args << "\n" << r.output;
}

// md5 of a yuv420p picture's visible bytes, as ffmpeg's framemd5 gives it.
inline std::string picture_md5(const PlanarView& v) {
  std::vector<uint8_t> tight;
  for (int p = 0; p < 3; ++p) {
    const int w = p ? (v.width + 1) / 2 : v.width, h = p ? (v.height + 1) / 2 : v.height;
    for (int y = 0; y < h; ++y) tight.insert(tight.end(), v.plane[p] + y * v.pitch[p], v.plane[p] + y * v.pitch[p] + w);
  }
  uint8_t digest[16];
  av_md5_sum(digest, tight.data(), tight.size());
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  return hex;
}

// Presentation times (s) of the decoded frames of the first video stream.
inline std::vector<double> probe_frame_times(const std::string& file) {
  const CommandOutput r = run("ffprobe -v error -select_streams v:0 -show_entries frame=best_effort_timestamp_time -of csv=p=0 " +
                        quote(file), true);
  std::vector<double> t;
  for (const auto& l : test::nonempty_lines(r.output))  // "N/A": no time known to ffmpeg
    t.push_back(l.rfind("N/A", 0) == 0 ? std::nan("") : std::atof(l.c_str()));
  return t;
}

// Frames that decode, by ffmpeg (errors make the count -1).
inline int decoded_frames(const std::string& file) {
  const CommandOutput r = run("ffmpeg -nostdin -v error -xerror -i " + quote(file) + " -map 0:v:0 -fps_mode passthrough -f framemd5 -", true);
  if (r.code != 0) return -1;
  int n = 0;
  for (const auto& l : test::nonempty_lines(r.output)) n += l[0] != '#';
  return n;
}

// md5 of each decoded picture, as ffmpeg sees it, in `pix_fmt`.
inline std::vector<std::string> frame_md5s(const std::string& file, const std::string& pix_fmt,
                                           const std::string& input_args = "") {
  const CommandOutput r = run("ffmpeg -nostdin -v error " + input_args + " -i " + quote(file) + " -map 0:v:0 -fps_mode passthrough -pix_fmt " +
                    pix_fmt + " -f framemd5 -", true);
  std::vector<std::string> out;
  for (const auto& l : test::nonempty_lines(r.output)) {
    if (l[0] == '#') continue;
    // A frame's line ends in its MD5; anything else is ffmpeg saying something went wrong.
    std::string md5 = l.substr(l.rfind(',') + 1);
    md5.erase(0, md5.find_first_not_of(' '));
    if (md5.size() != 32 || md5.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw std::runtime_error(file + ": not a frame's MD5 in ffmpeg's framemd5 output: " + l);
    out.push_back(md5);
  }
  return out;
}

inline std::string probe_stream(const std::string& file, const std::string& selector, const std::string& entries) {
  return run("ffprobe -v error -select_streams " + selector + " -show_entries stream=" + entries +
             " -of default=nw=1:nk=1 " + quote(file), true)
      .output;
}

// Packet payloads of every stream of `type`, read with libavformat.
inline std::vector<std::string> packet_payloads(const std::string& file, AVMediaType type) {
  std::vector<std::string> out;
  AVFormatContext* ctx = nullptr;
  if (avformat_open_input(&ctx, file.c_str(), nullptr, nullptr) < 0) return out;
  if (avformat_find_stream_info(ctx, nullptr) >= 0) {
    AVPacket* p = av_packet_alloc();
    while (av_read_frame(ctx, p) >= 0) {
      if (ctx->streams[p->stream_index]->codecpar->codec_type == type)
        out.emplace_back(reinterpret_cast<const char*>(p->data), size_t(p->size));
      av_packet_unref(p);
    }
    av_packet_free(&p);
  }
  avformat_close_input(&ctx);
  return out;
}

// Converts decoded pictures into the writer's format with swscale (the
// pipeline's own converters are not under test here).
class Converter {
 public:
  ~Converter() { sws_freeContext(sws_); }
  PlanarView convert(const DecodedFrame& in, PixelFormat format, Size size, ColorSpec color) {
    const PlanarView src = in.view();
    const PlaneLayout layout = plane_layout(format, size.width, size.height, 32);
    buffer_.resize(layout.total_bytes() + 64);
    PlanarView dst;
    dst.format = format;
    dst.width = size.width;
    dst.height = size.height;
    uint8_t* base = buffer_.data();
    for (int i = 0; i < layout.count; ++i) {
      dst.plane[i] = base;
      dst.pitch[i] = layout.pitch[i];
      base += layout.bytes(i);
    }
    sws_ = sws_getCachedContext(sws_, src.width, src.height, to_av(src.format), size.width, size.height, to_av(format),
                                SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr, nullptr, nullptr);
    const int* in_coefficients = sws_getCoefficients(to_av_space(in.color.matrix, src.height));
    const int* out_coefficients = sws_getCoefficients(to_av_space(color.matrix, size.height));
    sws_setColorspaceDetails(sws_, in_coefficients, in.color.range == ColorRange::full, out_coefficients,
                             color.range == ColorRange::full, 0, 1 << 16, 1 << 16);
    const uint8_t* src_planes[4] = {src.plane[0], src.plane[1], src.plane[2], nullptr};
    const int src_pitch[4] = {int(src.pitch[0]), int(src.pitch[1]), int(src.pitch[2]), 0};
    uint8_t* dst_planes[4] = {dst.plane[0], dst.plane[1], dst.plane[2], nullptr};
    const int dst_pitch[4] = {int(dst.pitch[0]), int(dst.pitch[1]), int(dst.pitch[2]), 0};
    sws_scale(sws_, src_planes, src_pitch, 0, src.height, dst_planes, dst_pitch);
    return dst;
  }

 private:
  SwsContext* sws_ = nullptr;
  std::vector<uint8_t> buffer_;
};

struct TranscodeResult {
  std::vector<int64_t> pts;  // of the frames read, in the input time base
  std::vector<Size> sizes;
  int64_t packets_in = 0;
  std::vector<std::string> warnings;
  std::optional<std::string> data_error;
  std::string description;
};

// Reader -> (swscale) -> writer, as the pipeline does it with an identity chain.
inline TranscodeResult transcode(const InputOptions& in, const OutputOptions& out) {
  TranscodeResult result;
  MediaWriter::preflight(out);
  MediaReader reader(in);
  std::unique_ptr<MediaWriter> writer;
  std::vector<MediaItem> early_packets;
  Converter converter;
  MediaItem item;
  while (reader.next(item)) {
    if (item.kind == MediaItem::Kind::packet) {
      ++result.packets_in;
      if (writer) writer->write_packet(item.packet);
      else early_packets.push_back(std::move(item));
      continue;
    }
    if (!writer) {
      writer = std::make_unique<MediaWriter>(out, reader.video(), item.frame.size(), reader);
      for (auto& p : early_packets) writer->write_packet(p.packet);
      early_packets.clear();
    }
    result.pts.push_back(item.frame.pts);
    result.sizes.push_back(item.frame.size());
    const PlanarView picture =
        converter.convert(item.frame, writer->encoder_format(), writer->output_size(), writer->encoder_color());
    writer->write_video(picture, item.frame.pts, item.frame.duration);
  }
  result.data_error = reader.data_error();
  if (writer) {
    writer->finish();
    result.warnings = writer->warnings();
    result.description = writer->description();
  }
  return result;
}

}  // namespace sp::codec_test
