#pragma once
// Float64 model of the documented conversions (convert.h), written apart
// from the fixed-point kernels: ITU-T H.273 code ranges, centre-sited 4:2:0
// chroma, 2x2 box average down, 9/3/3/1 bilinear up, odd edges repeated.
#include <algorithm>
#include <cmath>

#include "tests/convert_test_util.h"

namespace sp::test {

struct RefColor {
  double kr, kb, kg;
  double y_black, y_span, c_zero, c_span;
};

inline RefColor ref_color(const ColorSpec& c, int bits) {
  RefColor r{};
  switch (c.matrix) {
    case ColorMatrix::bt601:
      r.kr = 0.299, r.kb = 0.114;
      break;
    case ColorMatrix::bt709:
      r.kr = 0.2126, r.kb = 0.0722;
      break;
    case ColorMatrix::bt2020:
      r.kr = 0.2627, r.kb = 0.0593;
      break;
  }
  r.kg = 1 - r.kr - r.kb;
  const double step = std::ldexp(1.0, bits - 8);
  r.c_zero = std::ldexp(1.0, bits - 1);
  if (c.range == ColorRange::full) {
    r.y_black = 0;
    r.y_span = r.c_span = std::ldexp(1.0, bits) - 1;
  } else {
    r.y_black = 16 * step;
    r.y_span = 219 * step;
    r.c_span = 224 * step;
  }
  return r;
}

inline int ref_round(double v, int max) { return int(std::clamp(std::floor(v + 0.5), 0.0, double(max))); }

// Y, U, V codes (U, V possibly fractional after interpolation) -> RGBA pixel bytes.
inline void ref_yuv_to_rgb(const RefColor& k, double y, double u, double v, uint8_t* out) {
  const double ey = (y - k.y_black) / k.y_span, pb = (u - k.c_zero) / k.c_span, pr = (v - k.c_zero) / k.c_span;
  const double r = ey + 2 * (1 - k.kr) * pr;
  const double b = ey + 2 * (1 - k.kb) * pb;
  const double g = (ey - k.kr * r - k.kb * b) / k.kg;
  out[0] = uint8_t(ref_round(255 * r, 255));
  out[1] = uint8_t(ref_round(255 * g, 255));
  out[2] = uint8_t(ref_round(255 * b, 255));
  out[3] = 255;
}

inline HostImage ref_to_rgba(const Picture& p, const ColorSpec& color) {
  const int w = p.width, h = p.height;
  HostImage out(w, h);
  const RefColor k = ref_color(color, p.format == PixelFormat::p010 ? 10 : 8);
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* o = &out.pixels[(size_t(y) * w + x) * 4];
      const uint8_t* b = p.row(0, y);
      switch (p.format) {
        case PixelFormat::rgba:
          std::memcpy(o, b + 4 * x, 4);
          break;
        case PixelFormat::bgr0:
          o[0] = b[4 * x + 2], o[1] = b[4 * x + 1], o[2] = b[4 * x], o[3] = 255;
          break;
        case PixelFormat::rgb24:
          o[0] = b[3 * x], o[1] = b[3 * x + 1], o[2] = b[3 * x + 2], o[3] = 255;
          break;
        case PixelFormat::gray:
          ref_yuv_to_rgb(k, b[x], k.c_zero, k.c_zero, o);
          break;
        case PixelFormat::yuv444p:
          ref_yuv_to_rgb(k, p.sample(0, x, y), p.sample(1, x, y), p.sample(2, x, y), o);
          break;
        default: {
          // Chroma site i sits at luma x = 2i + 0.5: a pixel interpolates
          // between its own site and the neighbour on its side.
          const int i = x / 2, j = y / 2;
          const int ni = std::clamp(x % 2 ? i + 1 : i - 1, 0, cw - 1);
          const int nj = std::clamp(y % 2 ? j + 1 : j - 1, 0, ch - 1);
          const bool interleaved = p.format != PixelFormat::yuv420p;
          auto chroma = [&](int c, int ci, int cj) {
            return interleaved ? p.sample(1, 2 * ci + c, cj) : p.sample(1 + c, ci, cj);
          };
          double uv[2];
          for (int c = 0; c < 2; ++c)
            uv[c] = (0.75 * 0.75) * chroma(c, i, j) + (0.25 * 0.75) * (chroma(c, ni, j) + chroma(c, i, nj)) +
                    (0.25 * 0.25) * chroma(c, ni, nj);
          ref_yuv_to_rgb(k, p.sample(0, x, y), uv[0], uv[1], o);
        }
      }
    }
  return out;
}

// Writes the reference of converting `img` into `out` (format and size preset).
inline void ref_from_rgba(const HostImage& img, const ColorSpec& color, Picture& out) {
  const int w = img.width, h = img.height, f10 = out.format == PixelFormat::p010;
  const RefColor k = ref_color(color, f10 ? 10 : 8);
  const int max = f10 ? 1023 : 255;
  auto px = [&](int x, int y, int c) {
    return double(img.pixels[(size_t(std::min(y, h - 1)) * w + std::min(x, w - 1)) * 4 + c]) / 255.0;
  };
  auto luma = [&](double r, double g, double b) { return k.y_black + k.y_span * (k.kr * r + k.kg * g + k.kb * b); };
  auto chroma_u = [&](double r, double g, double b) {
    return k.c_zero + k.c_span * (b - (k.kr * r + k.kg * g + k.kb * b)) / (2 * (1 - k.kb));
  };
  auto chroma_v = [&](double r, double g, double b) {
    return k.c_zero + k.c_span * (r - (k.kr * r + k.kg * g + k.kb * b)) / (2 * (1 - k.kr));
  };
  auto put = [&](int plane, int index, int y, int v) {
    uint8_t* r = out.row(plane, y);
    if (f10) {
      r[2 * index] = uint8_t((v << 6) & 0xFF);
      r[2 * index + 1] = uint8_t((v << 6) >> 8);
    } else {
      r[index] = uint8_t(v);
    }
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double r = px(x, y, 0), g = px(x, y, 1), b = px(x, y, 2);
      uint8_t* o = out.row(0, y);
      switch (out.format) {
        case PixelFormat::rgba:
          std::memcpy(o + 4 * x, &img.pixels[(size_t(y) * w + x) * 4], 4);
          break;
        case PixelFormat::bgr0:
          o[4 * x] = img.pixels[(size_t(y) * w + x) * 4 + 2];
          o[4 * x + 1] = img.pixels[(size_t(y) * w + x) * 4 + 1];
          o[4 * x + 2] = img.pixels[(size_t(y) * w + x) * 4];
          o[4 * x + 3] = 255;
          break;
        case PixelFormat::rgb24:
          std::memcpy(o + 3 * x, &img.pixels[(size_t(y) * w + x) * 4], 3);
          break;
        case PixelFormat::yuv444p:
          put(1, x, y, ref_round(chroma_u(r, g, b), max));
          put(2, x, y, ref_round(chroma_v(r, g, b), max));
          [[fallthrough]];
        default:
          put(0, x, y, ref_round(luma(r, g, b), max));
      }
    }
  if (!is_subsampled(out.format)) return;
  for (int j = 0; j < (h + 1) / 2; ++j)
    for (int i = 0; i < (w + 1) / 2; ++i) {
      double m[3];
      for (int c = 0; c < 3; ++c)
        m[c] =
            (px(2 * i, 2 * j, c) + px(2 * i + 1, 2 * j, c) + px(2 * i, 2 * j + 1, c) + px(2 * i + 1, 2 * j + 1, c)) / 4;
      const int u = ref_round(chroma_u(m[0], m[1], m[2]), max), v = ref_round(chroma_v(m[0], m[1], m[2]), max);
      if (out.format == PixelFormat::yuv420p) {
        put(1, i, j, u);
        put(2, i, j, v);
      } else {
        put(1, 2 * i, j, u);
        put(1, 2 * i + 1, j, v);
      }
    }
}

}  // namespace sp::test
