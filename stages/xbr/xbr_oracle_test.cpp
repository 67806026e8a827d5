// Test-only helpers: FFmpeg's xbr filter as the oracle, image loading and a
// lossy codec round trip. No TESTs here.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "stages/xbr/xbr_test_util.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

namespace sp::test {
namespace {

void check(int ret, const char* what) {
  if (ret < 0) {
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(ret, buf, sizeof buf);
    throw std::runtime_error(std::string(what) + ": " + buf);
  }
}

// Our RGBA bytes <-> FFmpeg's 0RGB32 word in native byte order (B,G,R,X on
// little-endian), alpha in the padding byte. Byte moves only.
uint32_t rgba_bytes_to_0rgb32(const uint8_t* p) {
  return (uint32_t(p[3]) << 24) | (uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | uint32_t(p[2]);
}
void word_0rgb32_to_rgba_bytes(uint32_t w, uint8_t* p) {
  p[0] = uint8_t(w >> 16);
  p[1] = uint8_t(w >> 8);
  p[2] = uint8_t(w);
  p[3] = uint8_t(w >> 24);
}

struct Graph {
  AVFilterGraph* graph = avfilter_graph_alloc();
  ~Graph() { avfilter_graph_free(&graph); }
};
struct Frame {
  AVFrame* f = av_frame_alloc();
  ~Frame() { av_frame_free(&f); }
};

}  // namespace

std::vector<HostImage> ffmpeg_xbr(const std::vector<HostImage>& frames, int n) {
  if (frames.empty()) return {};
  const int w = frames[0].width, h = frames[0].height;
  Graph g;
  AVFilterContext *src = nullptr, *xbr = nullptr, *sink = nullptr;
  const std::string src_args = "video_size=" + std::to_string(w) + "x" + std::to_string(h) +
                               ":pix_fmt=" + std::to_string(int(AV_PIX_FMT_0RGB32)) +
                               ":time_base=1/25:pixel_aspect=1/1";
  check(avfilter_graph_create_filter(&src, avfilter_get_by_name("buffer"), "in", src_args.c_str(), nullptr, g.graph),
        "buffer");
  check(avfilter_graph_create_filter(&xbr, avfilter_get_by_name("xbr"), "xbr", ("n=" + std::to_string(n)).c_str(),
                                     nullptr, g.graph),
        "xbr");
  check(avfilter_graph_create_filter(&sink, avfilter_get_by_name("buffersink"), "out", nullptr, nullptr, g.graph),
        "buffersink");
  const enum AVPixelFormat sink_formats[] = {AV_PIX_FMT_0RGB32, AV_PIX_FMT_NONE};
  check(av_opt_set_int_list(sink, "pix_fmts", sink_formats, AV_PIX_FMT_NONE, AV_OPT_SEARCH_CHILDREN), "pix_fmts");
  check(avfilter_link(src, 0, xbr, 0), "link");
  check(avfilter_link(xbr, 0, sink, 0), "link");
  check(avfilter_graph_config(g.graph, nullptr), "graph config");
  // A format converter in the graph would make this no longer FFmpeg's xbr
  // on our bytes.
  if (g.graph->nb_filters != 3) throw std::runtime_error("libavfilter inserted a conversion");

  std::vector<HostImage> results;
  for (size_t i = 0; i < frames.size(); ++i) {
    const HostImage& in = frames[i];
    if (in.width != w || in.height != h) throw std::invalid_argument("ffmpeg_xbr: frames differ in size");
    Frame frame;
    frame.f->format = AV_PIX_FMT_0RGB32;
    frame.f->width = w;
    frame.f->height = h;
    frame.f->pts = int64_t(i);
    check(av_frame_get_buffer(frame.f, 0), "frame buffer");
    for (int y = 0; y < h; ++y) {
      auto* row = reinterpret_cast<uint32_t*>(frame.f->data[0] + size_t(y) * frame.f->linesize[0]);
      for (int x = 0; x < w; ++x) row[x] = rgba_bytes_to_0rgb32(&in.pixels[(size_t(y) * w + x) * 4]);
    }
    check(av_buffersrc_add_frame(src, frame.f), "add frame");
  }
  check(av_buffersrc_add_frame(src, nullptr), "eof");
  for (size_t i = 0; i < frames.size(); ++i) {
    Frame result;
    check(av_buffersink_get_frame(sink, result.f), "get frame");
    HostImage out(result.f->width, result.f->height);
    for (int y = 0; y < out.height; ++y) {
      const auto* row = reinterpret_cast<const uint32_t*>(result.f->data[0] + size_t(y) * result.f->linesize[0]);
      for (int x = 0; x < out.width; ++x)
        word_0rgb32_to_rgba_bytes(row[x], &out.pixels[(size_t(y) * out.width + x) * 4]);
    }
    results.push_back(std::move(out));
  }
  return results;
}

std::vector<uint32_t> ffmpeg_rgbtoyuv_table() {
  std::vector<uint32_t> table(size_t(1) << 24);
  for (int bg = -255; bg < 256; bg++) {
    for (int rg = -255; rg < 256; rg++) {
      const uint32_t u = uint32_t((-169 * rg + 500 * bg) / 1000) + 128;
      const uint32_t v = uint32_t((500 * rg - 81 * bg) / 1000) + 128;
      const int startg = std::max({-bg, -rg, 0});
      const int endg = std::min({255 - bg, 255 - rg, 255});
      uint32_t y = uint32_t((299 * rg + 1000 * startg + 114 * bg) / 1000);
      uint32_t c = uint32_t(bg + (rg << 16) + 0x010101 * startg);
      for (int g = startg; g <= endg; g++) {
        table[c] = ((y++) << 16) + (u << 8) + v;
        c += 0x010101;
      }
    }
  }
  return table;
}

HostImage load_image_rgba(const std::string& path) {
  AVFormatContext* fmt = nullptr;
  if (avformat_open_input(&fmt, path.c_str(), nullptr, nullptr) < 0) return {};
  HostImage out;
  const AVCodec* dec = nullptr;
  AVCodecContext* cc = nullptr;
  AVPacket* pkt = av_packet_alloc();
  Frame frame;
  bool got = false;
  const int si = avformat_find_stream_info(fmt, nullptr) >= 0
                     ? av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &dec, 0)
                     : -1;
  if (si >= 0 && (cc = avcodec_alloc_context3(dec)) &&
      avcodec_parameters_to_context(cc, fmt->streams[si]->codecpar) >= 0 && avcodec_open2(cc, dec, nullptr) >= 0) {
    while (!got && av_read_frame(fmt, pkt) >= 0) {
      if (pkt->stream_index == si && avcodec_send_packet(cc, pkt) >= 0)
        got = avcodec_receive_frame(cc, frame.f) >= 0;
      av_packet_unref(pkt);
    }
    if (!got && avcodec_send_packet(cc, nullptr) >= 0) got = avcodec_receive_frame(cc, frame.f) >= 0;
  }
  if (got) {
    out = HostImage(frame.f->width, frame.f->height);
    SwsContext* sws = sws_getContext(frame.f->width, frame.f->height, AVPixelFormat(frame.f->format),
                                     frame.f->width, frame.f->height, AV_PIX_FMT_RGBA, SWS_POINT, nullptr, nullptr,
                                     nullptr);
    uint8_t* dst[4] = {out.pixels.data(), nullptr, nullptr, nullptr};
    const int dst_stride[4] = {int(out.pitch), 0, 0, 0};
    if (!sws || sws_scale(sws, frame.f->data, frame.f->linesize, 0, frame.f->height, dst, dst_stride) <= 0)
      out = HostImage();
    sws_freeContext(sws);
  }
  av_packet_free(&pkt);
  avcodec_free_context(&cc);
  avformat_close_input(&fmt);
  return out;
}

std::vector<HostImage> lossy_roundtrip(const std::vector<HostImage>& frames, int crf) {
  if (frames.empty()) return {};
  char dir_template[] = "/tmp/sp_xbr_lossy_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) throw std::runtime_error("mkdtemp failed");
  const std::string raw_in = std::string(dir) + "/in.rgba", video = std::string(dir) + "/clip.mp4",
                    raw_out = std::string(dir) + "/out.rgba";
  {
    std::ofstream f(raw_in, std::ios::binary);
    for (const auto& fr : frames) f.write(reinterpret_cast<const char*>(fr.pixels.data()), fr.pixels.size());
  }
  const std::string size = std::to_string(frames[0].width) + "x" + std::to_string(frames[0].height);
  const std::string encode = "ffmpeg -nostdin -v error -y -f rawvideo -pix_fmt rgba -s " + size + " -r 30 -i " +
                             raw_in + " -c:v libx264 -preset veryfast -crf " + std::to_string(crf) +
                             " -pix_fmt yuv420p " + video;
  const std::string decode = "ffmpeg -nostdin -v error -y -i " + video + " -f rawvideo -pix_fmt rgba " + raw_out;
  if (std::system(encode.c_str()) != 0 || std::system(decode.c_str()) != 0)
    throw std::runtime_error("ffmpeg CLI round trip failed: " + encode);
  std::vector<HostImage> out;
  std::ifstream f(raw_out, std::ios::binary);
  for (size_t i = 0; i < frames.size(); ++i) {
    HostImage img(frames[0].width, frames[0].height);
    if (!f.read(reinterpret_cast<char*>(img.pixels.data()), img.pixels.size())) break;
    out.push_back(std::move(img));
  }
  std::remove(raw_in.c_str());
  std::remove(video.c_str());
  std::remove(raw_out.c_str());
  rmdir(dir);
  return out;
}

std::vector<std::string> pixel_art_files() {
  static const char* const kCandidates[] = {
      "/usr/share/games/mirrormagic/graphics/gfx_classic/RocksHeroes.png",
      "/usr/share/games/mirrormagic/graphics/gfx_classic/RocksElements.png",
      "/usr/share/games/mirrormagic/graphics/gfx_classic/RocksSP.png",
      "/usr/share/games/mirrormagic/graphics/gfx_classic/RocksDC.png",
  };
  std::vector<std::string> found;
  for (const char* p : kCandidates)
    if (access(p, R_OK) == 0) found.emplace_back(p);
  return found;
}

}  // namespace sp::test
