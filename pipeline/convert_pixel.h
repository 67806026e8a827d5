#pragma once
// Per-pixel colour conversion shared by convert_cpu.cpp and convert.cu: the
// same integer arithmetic on both backends, so they agree bit for bit.
//
// Conventions (see also convert.h):
// - Coefficients are fixed point with kFrac fractional bits, computed once on
//   the host from the ColorSpec (make_yuv_to_rgb / make_rgb_to_yuv).
// - Results are rounded half up ((x + half) >> bits, arithmetic shift) and
//   clamped to the code range.
// - 4:2:0 chroma is sited at the centre of its 2x2 luma block (JPEG/MPEG-1
//   siting, swscale's default). Downsampling is the 2x2 box average;
//   upsampling is bilinear with weights 9/16, 3/16, 3/16, 1/16 from the
//   nearest four chroma samples. Pictures with odd sizes behave as if the last
//   column/row were repeated to make them even.
#include <cmath>
#include <cstdint>

#include "pipeline/hd.h"
#include "pipeline/image.h"

namespace sp::convert_detail {

constexpr int kFrac = 16;       // fractional bits of every coefficient
constexpr int kWeightBits = 4;  // bilinear chroma weights sum to 16

// YUV codes (any bit depth) -> 8-bit RGB. Inputs arrive multiplied by 16 so
// that interpolated chroma keeps its fraction until the one final rounding.
struct YuvToRgb {
  int32_t y_black16 = 0;  // 16 x luma code of black
  int32_t c_zero16 = 0;   // 16 x chroma code of zero
  int32_t cy = 0, r_v = 0, g_u = 0, g_v = 0, b_u = 0;
};

// 8-bit RGB -> YUV codes of the output bit depth.
struct RgbToYuv {
  int32_t y_black = 0, c_zero = 0, max_code = 255;
  int32_t y_r = 0, y_g = 0, y_b = 0;
  int32_t u_r = 0, u_g = 0, u_b = 0;
  int32_t v_r = 0, v_g = 0, v_b = 0;
};

struct LumaWeights {
  double kr, kb;
};

inline LumaWeights luma_weights(ColorMatrix m) {
  switch (m) {
    case ColorMatrix::bt601:
      return {0.299, 0.114};
    case ColorMatrix::bt2020:
      return {0.2627, 0.0593};
    case ColorMatrix::bt709:
      break;
  }
  return {0.2126, 0.0722};
}

inline int32_t fixed(double v) { return static_cast<int32_t>(std::lround(v * (1 << kFrac))); }

// Code ranges per ITU-T H.273: limited = 219/224 x 2^(n-8) steps above 16 x
// 2^(n-8); full = 2^n - 1 steps.
struct CodeRange {
  double y_black, y_span, c_zero, c_span;
};
inline CodeRange code_range(ColorRange range, int bits) {
  const double scale = double(1 << (bits - 8));
  const double c_zero = double(1 << (bits - 1));
  if (range == ColorRange::full) {
    const double top = double((1 << bits) - 1);
    return {0.0, top, c_zero, top};
  }
  return {16 * scale, 219 * scale, c_zero, 224 * scale};
}

inline YuvToRgb make_yuv_to_rgb(const ColorSpec& color, int bits) {
  const auto [kr, kb] = luma_weights(color.matrix);
  const double kg = 1.0 - kr - kb;
  const CodeRange cr = code_range(color.range, bits);
  const double ys = 255.0 / cr.y_span, cs = 255.0 / cr.c_span;
  YuvToRgb k;
  k.y_black16 = static_cast<int32_t>(std::lround(16 * cr.y_black));
  k.c_zero16 = static_cast<int32_t>(std::lround(16 * cr.c_zero));
  k.cy = fixed(ys);
  k.r_v = fixed(2 * (1 - kr) * cs);
  k.b_u = fixed(2 * (1 - kb) * cs);
  k.g_u = fixed(-2 * kb * (1 - kb) / kg * cs);
  k.g_v = fixed(-2 * kr * (1 - kr) / kg * cs);
  return k;
}

inline RgbToYuv make_rgb_to_yuv(const ColorSpec& color, int bits) {
  const auto [kr, kb] = luma_weights(color.matrix);
  const CodeRange cr = code_range(color.range, bits);
  const double ys = cr.y_span / 255.0, cs = cr.c_span / 255.0;
  RgbToYuv k;
  k.y_black = static_cast<int32_t>(std::lround(cr.y_black));
  k.c_zero = static_cast<int32_t>(std::lround(cr.c_zero));
  k.max_code = (1 << bits) - 1;
  // Derive the last coefficient of each row from the others so grey maps to
  // exactly zero chroma and the luma weights sum exactly to the span.
  k.y_r = fixed(kr * ys);
  k.y_b = fixed(kb * ys);
  k.y_g = fixed(ys) - k.y_r - k.y_b;
  k.u_r = fixed(-kr / (2 * (1 - kb)) * cs);
  k.u_b = fixed(0.5 * cs);
  k.u_g = -k.u_r - k.u_b;
  k.v_r = fixed(0.5 * cs);
  k.v_b = fixed(-kb / (2 * (1 - kr)) * cs);
  k.v_g = -k.v_r - k.v_b;
  return k;
}

SP_HD int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
SP_HD int min_int(int a, int b) { return a < b ? a : b; }
SP_HD int max_int(int a, int b) { return a > b ? a : b; }

// RGBA8 in memory is R,G,B,A bytes; both hosts and CUDA devices are little endian.
SP_HD uint32_t pack_rgba(int r, int g, int b, int a) {
  return uint32_t(r) | (uint32_t(g) << 8) | (uint32_t(b) << 16) | (uint32_t(a) << 24);
}
SP_HD int red(uint32_t p) { return int(p & 0xFF); }
SP_HD int green(uint32_t p) { return int((p >> 8) & 0xFF); }
SP_HD int blue(uint32_t p) { return int((p >> 16) & 0xFF); }

SP_HD uint32_t yuv16_to_rgba(const YuvToRgb& k, int y16, int u16, int v16) {
  constexpr int shift = kFrac + kWeightBits;
  constexpr int half = 1 << (shift - 1);
  const int y = (y16 - k.y_black16) * k.cy + half;
  const int u = u16 - k.c_zero16, v = v16 - k.c_zero16;
  const int r = (y + k.r_v * v) >> shift;
  const int g = (y + k.g_u * u + k.g_v * v) >> shift;
  const int b = (y + k.b_u * u) >> shift;
  return pack_rgba(clamp_int(r, 0, 255), clamp_int(g, 0, 255), clamp_int(b, 0, 255), 255);
}

SP_HD int rgb_to_luma(const RgbToYuv& k, int r, int g, int b) {
  const int v = ((k.y_black << kFrac) + k.y_r * r + k.y_g * g + k.y_b * b + (1 << (kFrac - 1))) >> kFrac;
  return clamp_int(v, 0, k.max_code);
}

// Chroma of the mean of 2^count_bits pixels whose channel sums are given:
// one rounding for the whole block.
SP_HD void rgb_sum_to_chroma(const RgbToYuv& k, int rs, int gs, int bs, int count_bits, int& u, int& v) {
  const int shift = kFrac + count_bits;
  const int base = (k.c_zero << shift) + (1 << (shift - 1));
  u = clamp_int((base + k.u_r * rs + k.u_g * gs + k.u_b * bs) >> shift, 0, k.max_code);
  v = clamp_int((base + k.v_r * rs + k.v_g * gs + k.v_b * bs) >> shift, 0, k.max_code);
}

}  // namespace sp::convert_detail
