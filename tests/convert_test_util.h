#pragma once
// Helpers for the colour conversion tests: owned planar pictures, sample
// access, and swscale as the independent oracle.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include "pipeline/image.h"
#include "tests/support/test_support.h"

namespace sp::test {

inline const PixelFormat kAllFormats[] = {PixelFormat::rgba, PixelFormat::bgr0,    PixelFormat::rgb24,
                                          PixelFormat::gray, PixelFormat::yuv420p, PixelFormat::yuv444p,
                                          PixelFormat::nv12, PixelFormat::p010};
inline const ColorMatrix kAllMatrices[] = {ColorMatrix::bt601, ColorMatrix::bt709, ColorMatrix::bt2020};
inline const ColorRange kAllRanges[] = {ColorRange::limited, ColorRange::full};

inline const char* to_string(ColorMatrix m) {
  return m == ColorMatrix::bt601 ? "bt601" : m == ColorMatrix::bt709 ? "bt709" : "bt2020";
}
inline const char* to_string(ColorRange r) { return r == ColorRange::full ? "full" : "limited"; }

inline bool is_subsampled(PixelFormat f) {
  return f == PixelFormat::yuv420p || f == PixelFormat::nv12 || f == PixelFormat::p010;
}
// Formats whose conversion uses the matrix and range.
inline bool uses_matrix(PixelFormat f) {
  return f != PixelFormat::rgba && f != PixelFormat::bgr0 && f != PixelFormat::rgb24;
}
// Every (format, colour) pair whose conversion differs: formats without a
// matrix appear once.
inline std::vector<std::pair<PixelFormat, ColorSpec>> all_conversion_cases() {
  std::vector<std::pair<PixelFormat, ColorSpec>> cases;
  for (PixelFormat f : kAllFormats) {
    if (!uses_matrix(f)) {
      cases.push_back({f, ColorSpec{}});
      continue;
    }
    for (ColorMatrix m : kAllMatrices)
      for (ColorRange r : kAllRanges) cases.push_back({f, ColorSpec{m, r}});
  }
  return cases;
}
inline int sample_bytes(PixelFormat f) { return f == PixelFormat::p010 ? 2 : 1; }
// Bytes of one pixel of plane `i` (for the chroma planes of 4:2:0: one chroma site).
inline int pixel_bytes(PixelFormat f, int i) {
  switch (f) {
    case PixelFormat::rgba:
    case PixelFormat::bgr0:
      return 4;
    case PixelFormat::rgb24:
      return 3;
    case PixelFormat::nv12:
      return i == 0 ? 1 : 2;
    case PixelFormat::p010:
      return i == 0 ? 2 : 4;
    default:
      return 1;
  }
}

// A picture with owned storage; `pad_bytes` per row beyond the tight pitch
// exercises pitch handling.
struct Picture {
  PixelFormat format = PixelFormat::rgba;
  int width = 0, height = 0;
  PlaneLayout layout;  // tight layout: what the pixels occupy
  std::vector<uint8_t> bytes;
  PlanarView view;

  Picture() = default;
  Picture(PixelFormat f, int w, int h, size_t pad_bytes = 0) : format(f), width(w), height(h) {
    layout = plane_layout(f, w, h);
    size_t total = 0;
    size_t offset[3] = {0, 0, 0};
    for (int i = 0; i < layout.count; ++i) {
      offset[i] = total;
      total += (layout.pitch[i] + pad_bytes) * layout.rows[i];
    }
    bytes.assign(total + 64, 0x5A);  // slack: swscale's SIMD may read a little past the end
    view.format = f;
    view.width = w;
    view.height = h;
    for (int i = 0; i < layout.count; ++i) {
      view.plane[i] = bytes.data() + offset[i];
      view.pitch[i] = layout.pitch[i] + pad_bytes;
    }
  }
  Picture(const Picture& o) : Picture(o.format, o.width, o.height, o.view.pitch[0] - o.layout.pitch[0]) {
    std::memcpy(bytes.data(), o.bytes.data(), bytes.size());
  }
  Picture& operator=(const Picture&) = delete;

  uint8_t* row(int plane, int y) const { return view.plane[plane] + size_t(y) * view.pitch[plane]; }
  // Sample value: bytes, or the 10-bit code of a p010 word.
  int sample(int plane, int index, int y) const {
    const uint8_t* r = row(plane, y);
    if (format == PixelFormat::p010) return (r[2 * index] | (r[2 * index + 1] << 8)) >> 6;
    return r[index];
  }
  int samples_per_row(int plane) const { return int(layout.pitch[plane]) / sample_bytes(format); }
};

// Random bytes in every plane; p010 gets random 10-bit codes in the high bits.
inline Picture random_picture(PixelFormat f, int w, int h, std::mt19937_64& rng, size_t pad_bytes = 0) {
  Picture p(f, w, h, pad_bytes);
  for (auto& b : p.bytes) b = uint8_t(rng());
  if (f == PixelFormat::p010)
    for (int i = 0; i < p.layout.count; ++i)
      for (int y = 0; y < p.layout.rows[i]; ++y)
        for (size_t x = 0; x + 1 < p.layout.pitch[i]; x += 2) {
          const int v = int(rng() % 1024) << 6;
          p.row(i, y)[x] = uint8_t(v & 0xFF);
          p.row(i, y)[x + 1] = uint8_t(v >> 8);
        }
  return p;
}

// Random codes within the nominal range of `range`: limited range keeps luma
// in 16..235 and chroma in 16..240 (x4 for 10 bits), as decoders deliver.
// (swscale wraps around instead of clipping on codes far outside it.)
inline Picture random_nominal_picture(PixelFormat f, int w, int h, ColorRange range, std::mt19937_64& rng) {
  Picture p = random_picture(f, w, h, rng);
  if (range == ColorRange::full || !uses_matrix(f)) return p;
  const int scale = f == PixelFormat::p010 ? 4 : 1;
  for (int i = 0; i < p.layout.count; ++i) {
    const bool luma = i == 0;
    const int lo = 16 * scale, hi = (luma ? 235 : 240) * scale;
    for (int y = 0; y < p.layout.rows[i]; ++y)
      for (int s = 0; s < p.samples_per_row(i); ++s) {
        const int v = lo + int(rng() % (hi - lo + 1));
        uint8_t* r = p.row(i, y);
        if (f == PixelFormat::p010) {
          r[2 * s] = uint8_t((v << 6) & 0xFF);
          r[2 * s + 1] = uint8_t((v << 6) >> 8);
        } else {
          r[s] = uint8_t(v);
        }
      }
  }
  return p;
}

inline AVPixelFormat av_format(PixelFormat f) {
  switch (f) {
    case PixelFormat::rgba:
      return AV_PIX_FMT_RGBA;
    case PixelFormat::bgr0:
      return AV_PIX_FMT_BGR0;
    case PixelFormat::rgb24:
      return AV_PIX_FMT_RGB24;
    case PixelFormat::gray:
      return AV_PIX_FMT_GRAY8;
    case PixelFormat::yuv420p:
      return AV_PIX_FMT_YUV420P;
    case PixelFormat::yuv444p:
      return AV_PIX_FMT_YUV444P;
    case PixelFormat::nv12:
      return AV_PIX_FMT_NV12;
    case PixelFormat::p010:
      return AV_PIX_FMT_P010LE;
  }
  return AV_PIX_FMT_NONE;
}

inline int sws_colorspace(ColorMatrix m) {
  switch (m) {
    case ColorMatrix::bt601:
      return SWS_CS_ITU601;
    case ColorMatrix::bt2020:
      return SWS_CS_BT2020;
    case ColorMatrix::bt709:
      break;
  }
  return SWS_CS_ITU709;
}

// The same picture grown to even width and height by repeating its last
// column/row: the documented meaning of odd sizes, and the size at which
// swscale's chroma geometry is exactly 2:1.
inline Picture pad_to_even(const Picture& p) {
  const int W = p.width + (p.width & 1), H = p.height + (p.height & 1);
  Picture out(p.format, W, H);
  for (int i = 0; i < p.layout.count; ++i) {
    const int px = pixel_bytes(p.format, i);
    const size_t have = p.layout.pitch[i], want = out.layout.pitch[i];
    for (int y = 0; y < out.layout.rows[i]; ++y) {
      const uint8_t* src = p.row(i, std::min(y, p.layout.rows[i] - 1));
      uint8_t* dst = out.row(i, y);
      std::memcpy(dst, src, have);
      for (size_t x = have; x < want; x += px) std::memcpy(dst + x, src + have - px, px);
    }
  }
  return out;
}

// swscale, configured for accuracy at the same size: the oracle. Chroma
// siting stays at swscale's default (centred), the convention the kernels
// document. `filter` is SWS_BILINEAR (chroma upsampling) or SWS_AREA (the
// 2x2 box average of chroma downsampling).
inline void sws_convert(const PlanarView& src, const PlanarView& dst, const ColorSpec& color, int filter,
                        AVPixelFormat dst_format = AV_PIX_FMT_NONE) {
  SwsContext* ctx = sws_alloc_context();
  if (!ctx) throw std::runtime_error("sws_alloc_context failed");
  const int flags = filter | SWS_ACCURATE_RND | SWS_BITEXACT | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;
  av_opt_set_int(ctx, "srcw", src.width, 0);
  av_opt_set_int(ctx, "srch", src.height, 0);
  av_opt_set_int(ctx, "src_format", av_format(src.format), 0);
  av_opt_set_int(ctx, "dstw", dst.width, 0);
  av_opt_set_int(ctx, "dsth", dst.height, 0);
  av_opt_set_int(ctx, "dst_format", dst_format != AV_PIX_FMT_NONE ? dst_format : av_format(dst.format), 0);
  av_opt_set_int(ctx, "sws_flags", flags, 0);
  const int full = color.range == ColorRange::full ? 1 : 0;
  av_opt_set_int(ctx, "src_range", full, 0);
  av_opt_set_int(ctx, "dst_range", full, 0);
  if (sws_init_context(ctx, nullptr, nullptr) < 0) {
    sws_freeContext(ctx);
    throw std::runtime_error("sws_init_context failed");
  }
  const int* coeffs = sws_getCoefficients(sws_colorspace(color.matrix));
  sws_setColorspaceDetails(ctx, coeffs, full, coeffs, full, 0, 1 << 16, 1 << 16);
  const uint8_t* sp[4] = {src.plane[0], src.plane[1], src.plane[2], nullptr};
  uint8_t* dp[4] = {dst.plane[0], dst.plane[1], dst.plane[2], nullptr};
  const int ss[4] = {int(src.pitch[0]), int(src.pitch[1]), int(src.pitch[2]), 0};
  const int ds[4] = {int(dst.pitch[0]), int(dst.pitch[1]), int(dst.pitch[2]), 0};
  sws_scale(ctx, sp, ss, 0, src.height, dp, ds);
  sws_freeContext(ctx);
}

inline PlanarView rgba_planar(const HostImage& img) {
  PlanarView v;
  v.format = PixelFormat::rgba;
  v.width = img.width;
  v.height = img.height;
  v.plane[0] = const_cast<uint8_t*>(img.pixels.data());
  v.pitch[0] = img.pitch;
  return v;
}

inline HostImage pad_to_even(const HostImage& img) {
  HostImage out(img.width + (img.width & 1), img.height + (img.height & 1));
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x)
      std::memcpy(&out.pixels[(size_t(y) * out.width + x) * 4],
                  &img.pixels[(size_t(std::min(y, img.height - 1)) * img.width + std::min(x, img.width - 1)) * 4], 4);
  return out;
}

// swscale's picture of `rgba` in `format` at the same size (odd sizes through pad_to_even).
inline Picture sws_from_rgba(const HostImage& rgba, PixelFormat format, const ColorSpec& color) {
  const HostImage even = pad_to_even(rgba);
  Picture out(format, even.width, even.height);
  sws_convert(rgba_planar(even), out.view, color, SWS_AREA);
  return out;
}

// swscale's RGBA of `pic` at the same size (odd sizes through pad_to_even,
// cropped back). For YUV and gray sources swscale writes planar GBR: its
// packed-RGB writers take a shortcut that snaps vertical chroma
// interpolation to whole or half lines, and its gray-to-packed-RGB path
// ignores the colour range; the planar writer does neither.
inline HostImage sws_to_rgba(const Picture& pic, const ColorSpec& color) {
  if (!uses_matrix(pic.format)) {
    HostImage out(pic.width, pic.height);
    sws_convert(pic.view, rgba_planar(out), color, SWS_BILINEAR);
    return out;
  }
  const Picture even = pad_to_even(pic);
  const int W = even.width, H = even.height;
  std::vector<uint8_t> gbr(size_t(W) * H * 3 + 64);
  PlanarView dst;
  dst.width = W;
  dst.height = H;
  for (int i = 0; i < 3; ++i) {
    dst.plane[i] = gbr.data() + size_t(i) * W * H;
    dst.pitch[i] = size_t(W);
  }
  sws_convert(even.view, dst, color, SWS_BILINEAR, AV_PIX_FMT_GBRP);
  HostImage out(pic.width, pic.height);
  for (int y = 0; y < pic.height; ++y)
    for (int x = 0; x < pic.width; ++x) {
      uint8_t* o = &out.pixels[size_t(y) * out.pitch + 4 * size_t(x)];
      const size_t at = size_t(y) * W + x;
      o[0] = dst.plane[2][at];
      o[1] = dst.plane[0][at];
      o[2] = dst.plane[1][at];
      o[3] = 255;
    }
  return out;
}

// A picture whose content is `rgba` converted by swscale (for photo-like sources).
inline Picture sws_picture(const HostImage& rgba, PixelFormat format, const ColorSpec& color) {
  const Picture even = sws_from_rgba(rgba, format, color);
  Picture out(format, rgba.width, rgba.height);
  for (int i = 0; i < out.layout.count; ++i)
    for (int y = 0; y < out.layout.rows[i]; ++y) std::memcpy(out.row(i, y), even.row(i, y), out.layout.pitch[i]);
  return out;
}

struct SampleDiff {
  int max_abs = 0;
  double mean_abs = 0;
  size_t count = 0;
  std::string where;  // first location of the maximum
};

// Compares the samples `actual` holds (its own size) with the same samples
// of `expected` (which may be the padded, larger picture). bgr0's X byte is
// not compared: it carries no colour.
inline SampleDiff compare_samples(const Picture& actual, const Picture& expected) {
  SampleDiff d;
  double sum = 0;
  for (int i = 0; i < actual.layout.count; ++i)
    for (int y = 0; y < actual.layout.rows[i]; ++y)
      for (int s = 0; s < actual.samples_per_row(i); ++s) {
        if (actual.format == PixelFormat::bgr0 && s % 4 == 3) continue;
        const int diff = std::abs(actual.sample(i, s, y) - expected.sample(i, s, y));
        sum += diff;
        ++d.count;
        if (diff > d.max_abs) {
          d.max_abs = diff;
          d.where = "plane " + std::to_string(i) + " sample " + std::to_string(s) + " row " + std::to_string(y) + ": " +
                    std::to_string(actual.sample(i, s, y)) + " vs " + std::to_string(expected.sample(i, s, y));
        }
      }
  d.mean_abs = d.count ? sum / d.count : 0;
  return d;
}

// RGB channels only, plus a separate count of alpha bytes differing from `alpha` (-1: compare with expected).
inline SampleDiff compare_rgb(const HostImage& actual, const HostImage& expected) {
  SampleDiff d;
  double sum = 0;
  for (int y = 0; y < actual.height; ++y)
    for (int x = 0; x < actual.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const size_t at = size_t(y) * actual.pitch + 4 * size_t(x) + c;
        const int diff = std::abs(int(actual.pixels[at]) - int(expected.pixels[at]));
        sum += diff;
        ++d.count;
        if (diff > d.max_abs) {
          d.max_abs = diff;
          d.where = "pixel (" + std::to_string(x) + "," + std::to_string(y) + ") channel " + std::to_string(c) + ": " +
                    std::to_string(actual.pixels[at]) + " vs " + std::to_string(expected.pixels[at]);
        }
      }
  d.mean_abs = d.count ? sum / d.count : 0;
  return d;
}

}  // namespace sp::test
