#include "stages/pencil/pencil_texture.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "pipeline/errors.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

namespace sp::pencil {

namespace {

constexpr double kPi = 3.14159265358979323846;

// splitmix64: a fixed, portable generator so the built-in texture never changes.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
};

int wrap(int v, int n) { return ((v % n) + n) % n; }

// One graphite stroke: a gaussian line profile, tapered ends, uneven pressure.
void draw_stroke(std::vector<double>& paper, int n, SplitMix& rng, double angle, double length,
                 double darkness) {
  const double cx = rng.uniform() * n, cy = rng.uniform() * n;
  const double sigma = 0.45 + 0.35 * rng.uniform();
  const double ripple = 0.15 * rng.uniform(), ripple_freq = 0.2 + 0.3 * rng.uniform();
  const double phase = 2 * kPi * rng.uniform();
  const double c = std::cos(angle), s = std::sin(angle);
  const int reach = int(std::ceil(0.5 * length + 3 * sigma)) + 1;
  const int y0 = int(std::floor(cy));
  // Strokes are steep (|sin| > 0.5), so each row meets one only over a few pixels.
  const double band = 3 * sigma / std::fabs(s) + 2;
  for (int y = y0 - reach; y <= y0 + reach; ++y) {
    const double centre = cx + (y + 0.5 - cy) * c / s;
    for (int x = int(std::floor(centre - band)); x <= int(std::ceil(centre + band)); ++x) {
      const double px = x + 0.5 - cx, py = y + 0.5 - cy;
      const double along = px * c + py * s, across = -px * s + py * c;
      const double t = along / length + 0.5;  // 0..1 over the stroke
      if (t <= 0 || t >= 1 || std::fabs(across) > 3 * sigma) continue;
      const double taper = std::pow(std::sin(kPi * t), 0.7);
      const double pressure = 1 - ripple * (0.5 + 0.5 * std::sin(ripple_freq * along + phase));
      const double cover = darkness * taper * pressure * std::exp(-across * across / (2 * sigma * sigma));
      paper[size_t(wrap(y, n)) * n + wrap(x, n)] *= 1 - cover;
    }
  }
}

}  // namespace

void compute_texture_statistics(PencilTexture& t) {
  for (int v = 0; v < 256; ++v) t.ln_table[v] = float(std::log(std::clamp(v, 1, 254) / 255.0));
  double s1 = 0, s2 = 0;
  for (uint8_t v : t.texels) {
    const double l = t.ln_table[v];
    s1 += l;
    s2 += l * l;
  }
  const double n = std::max<size_t>(1, t.texels.size());
  t.mean_ln = s1 / n;
  t.mean_ln2 = s2 / n;
}

static PencilTexture generate_builtin_texture() {
  const int n = kBuiltinTextureSize;
  std::vector<double> paper(size_t(n) * n, 1.0);
  SplitMix rng{0x70656E63696C2121ull};
  // Main hatching (about 50 degrees), dense enough to cover the sheet twice,
  // then a sparse, lighter cross direction as in a scanned graphite sample.
  const double main_angle = -50.0 * kPi / 180.0, cross_angle = 35.0 * kPi / 180.0;
  for (int i = 0; i < 4200; ++i) {
    const double angle = main_angle + (rng.uniform() - 0.5) * 10.0 * kPi / 180.0;
    draw_stroke(paper, n, rng, angle, 30 + 70 * rng.uniform(), 0.10 + 0.22 * rng.uniform());
  }
  for (int i = 0; i < 900; ++i) {
    const double angle = cross_angle + (rng.uniform() - 0.5) * 10.0 * kPi / 180.0;
    draw_stroke(paper, n, rng, angle, 20 + 50 * rng.uniform(), 0.05 + 0.12 * rng.uniform());
  }
  // Paper grain: value noise on a 4-pixel lattice (128 cells wrap at 512).
  const int cell = 4, cells = n / cell;
  std::vector<double> lattice(size_t(cells) * cells);
  for (double& v : lattice) v = rng.uniform();
  PencilTexture t;
  t.width = t.height = n;
  t.texels.resize(size_t(n) * n);
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const double fx = double(x) / cell, fy = double(y) / cell;
      const int ix = int(fx), iy = int(fy);
      const double ax = fx - ix, ay = fy - iy;
      auto at = [&](int cx, int cy) { return lattice[size_t(cy % cells) * cells + (cx % cells)]; };
      const double grain = (1 - ay) * ((1 - ax) * at(ix, iy) + ax * at(ix + 1, iy)) +
                           ay * ((1 - ax) * at(ix, iy + 1) + ax * at(ix + 1, iy + 1));
      const double h = 0.96 * paper[size_t(y) * n + x] * (1 - 0.07 * grain);
      t.texels[size_t(y) * n + x] = uint8_t(std::clamp<long>(std::lround(h * 255), 1, 254));
    }
  }
  compute_texture_statistics(t);
  return t;
}

PencilTexture builtin_texture() {
  static const PencilTexture cached = generate_builtin_texture();
  return cached;
}

PencilTexture load_texture(const std::string& path) {
  auto fail = [&](const std::string& why) {
    return Error(ExitCode::config, "pencil: texture '" + path + "': " + why);
  };
  AVFormatContext* raw_format = nullptr;
  if (avformat_open_input(&raw_format, path.c_str(), nullptr, nullptr) < 0) throw fail("cannot open");
  std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> format(
      raw_format, [](AVFormatContext* f) { avformat_close_input(&f); });
  if (avformat_find_stream_info(format.get(), nullptr) < 0) throw fail("unreadable");
  const int stream = av_find_best_stream(format.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (stream < 0) throw fail("no picture in it");
  const AVCodecParameters* par = format->streams[stream]->codecpar;
  const AVCodec* codec = avcodec_find_decoder(par->codec_id);
  if (!codec) throw fail("no decoder");
  std::unique_ptr<AVCodecContext, void (*)(AVCodecContext*)> ctx(
      avcodec_alloc_context3(codec), [](AVCodecContext* c) { avcodec_free_context(&c); });
  if (!ctx || avcodec_parameters_to_context(ctx.get(), par) < 0 || avcodec_open2(ctx.get(), codec, nullptr) < 0)
    throw fail("cannot open decoder");
  std::unique_ptr<AVPacket, void (*)(AVPacket*)> packet(av_packet_alloc(), [](AVPacket* p) { av_packet_free(&p); });
  std::unique_ptr<AVFrame, void (*)(AVFrame*)> frame(av_frame_alloc(), [](AVFrame* f) { av_frame_free(&f); });
  bool got = false, flushing = false;
  while (!got) {
    if (!flushing) {
      const int r = av_read_frame(format.get(), packet.get());
      if (r < 0) {
        flushing = true;
        avcodec_send_packet(ctx.get(), nullptr);
      } else {
        if (packet->stream_index == stream) avcodec_send_packet(ctx.get(), packet.get());
        av_packet_unref(packet.get());
      }
    }
    const int r = avcodec_receive_frame(ctx.get(), frame.get());
    if (r == 0) got = true;
    else if (r == AVERROR_EOF || (flushing && r == AVERROR(EAGAIN))) break;
  }
  if (!got || frame->width <= 0 || frame->height <= 0) throw fail("no decodable picture");
  PencilTexture t;
  t.width = frame->width;
  t.height = frame->height;
  t.texels.resize(size_t(t.width) * t.height);
  SwsContext* sws = sws_getContext(t.width, t.height, AVPixelFormat(frame->format), t.width, t.height,
                                   AV_PIX_FMT_GRAY8, SWS_BILINEAR, nullptr, nullptr, nullptr);
  if (!sws) throw fail("unsupported pixel format");
  uint8_t* dst[4] = {t.texels.data(), nullptr, nullptr, nullptr};
  int dst_pitch[4] = {t.width, 0, 0, 0};
  sws_scale(sws, frame->data, frame->linesize, 0, t.height, dst, dst_pitch);
  sws_freeContext(sws);
  for (uint8_t& v : t.texels) v = uint8_t(std::clamp<int>(v, 1, 254));
  compute_texture_statistics(t);
  return t;
}

PencilTexture fit_texture(const PencilTexture& source, TextureMode mode, Size frame) {
  if (mode == TextureMode::tile) return source;
  PencilTexture t;
  t.width = frame.width;
  t.height = frame.height;
  t.texels.resize(size_t(t.width) * t.height);
  const double sx = double(source.width) / frame.width, sy = double(source.height) / frame.height;
  for (int y = 0; y < frame.height; ++y) {
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, double(source.height - 1));
    const int y0 = int(fy), y1 = std::min(y0 + 1, source.height - 1);
    const double ay = fy - y0;
    for (int x = 0; x < frame.width; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, double(source.width - 1));
      const int x0 = int(fx), x1 = std::min(x0 + 1, source.width - 1);
      const double ax = fx - x0;
      auto at = [&](int xx, int yy) { return double(source.texels[size_t(yy) * source.width + xx]); };
      const double v = (1 - ay) * ((1 - ax) * at(x0, y0) + ax * at(x1, y0)) + ay * ((1 - ax) * at(x0, y1) + ax * at(x1, y1));
      t.texels[size_t(y) * t.width + x] = uint8_t(std::clamp<long>(std::lround(v), 1, 254));
    }
  }
  compute_texture_statistics(t);
  return t;
}

}  // namespace sp::pencil
