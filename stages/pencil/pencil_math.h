#pragma once
// Per-pixel arithmetic of the pencil stage, compiled by g++ and nvcc alike so
// both backends run the same operations. The stroke branch is integer
// arithmetic end to end (luma, median, gradient, line responses, argmax,
// stroke sums) and therefore bit-exact across backends; the final
// tone/texture combination is float arithmetic rounded step by step, with
// exp and pow of its own instead of the libraries' (which differ in the last
// ulp), so it is bit-exact too.
#include <cmath>
#include <cstdint>

#include "pipeline/hd.h"

namespace sp::pencil {

constexpr int kDirections = 8;
constexpr int kGradientBits = 8;  // gradients are 0..255 in both forms: one byte per tap of the line convolutions
constexpr uint16_t kGradientMask = (1u << kGradientBits) - 1;
constexpr int kWeightOne = 255;   // line kernel weights are 8-bit fixed point
constexpr int kMaxHalfLength = 64;  // keeps stroke sums inside uint32 (see pencil_kernels.cpp)
constexpr int kMaxHalfWidth = 3;

SP_HD int imin(int a, int b) { return a < b ? a : b; }
SP_HD int imax(int a, int b) { return a > b ? a : b; }
SP_HD int iclamp(int v, int lo, int hi) { return imin(imax(v, lo), hi); }

// BT.601 luma in 8-bit fixed point (weights 77/150/29 sum to 256): exact on both backends.
SP_HD int luma_sum(int r, int g, int b) { return 77 * r + 150 * g + 29 * b; }
SP_HD int luma8(int r, int g, int b) { return (luma_sum(r, g, b) + 128) >> 8; }
SP_HD int luma8_rgba(uint32_t px) {
  return luma8(int(px & 255u), int((px >> 8) & 255u), int((px >> 16) & 255u));
}

// Median of nine by the 19-exchange network (Paeth): min/max only, so exact.
SP_HD void sort2(int& a, int& b) {
  const int lo = imin(a, b);
  b = imax(a, b);
  a = lo;
}
SP_HD int median9(int p0, int p1, int p2, int p3, int p4, int p5, int p6, int p7, int p8) {
  sort2(p1, p2); sort2(p4, p5); sort2(p7, p8);
  sort2(p0, p1); sort2(p3, p4); sort2(p6, p7);
  sort2(p1, p2); sort2(p4, p5); sort2(p7, p8);
  sort2(p0, p3); sort2(p5, p8); sort2(p4, p7);
  sort2(p3, p6); sort2(p1, p4); sort2(p2, p5);
  sort2(p4, p7); sort2(p4, p2); sort2(p6, p4);
  sort2(p4, p2);
  return p4;
}

// Forward differences as in the seed (zero past the last column/row), halved
// to one byte (the stroke map is min-max normalized, so only the scale goes;
// the CUDA line convolutions take 4 byte taps per dp4a).
// L1: (|dx| + |dy|) / 2 rounded (0..255). L2: sqrt((dx^2 + dy^2) / 2) rounded
// (0..255), the same scale. sqrtf is correctly rounded on both backends and
// the halving is exact, so the integer result is identical.
SP_HD int gradient_l1(int dx, int dy) { return ((dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy) + 1) >> 1; }
SP_HD int gradient_l2(int dx, int dy) {
  const float s = sqrtf(float(dx * dx + dy * dy) * 0.5f);
  return int(s + 0.5f);
}

// Gradient and its direction class in one 16-bit word.
SP_HD uint16_t pack_classified(int gradient, int direction) {
  return uint16_t(gradient | (direction << kGradientBits));
}
SP_HD int classified_gradient(uint16_t v) { return v & kGradientMask; }
SP_HD int classified_direction(uint16_t v) { return v >> kGradientBits; }
// C_i of Lu's eq. (2): the gradient where the pixel's class is `direction`, else 0.
SP_HD uint32_t masked_gradient(uint16_t v, int direction) {
  return classified_direction(v) == direction ? uint32_t(v & kGradientMask) : 0u;
}

// Video: the frame's stroke range [min, max] Sp, EMA-smoothed like the
// histogram (a new strong edge would otherwise re-scale every stroke). Double
// with an explicit fma so both backends round alike.
SP_HD double ema_step(double factor, double previous, double current) {
#if defined(__CUDA_ARCH__)
  return ::fma(factor, previous, (1.0 - factor) * current);
#else
  return std::fma(factor, previous, (1.0 - factor) * current);
#endif
}
SP_HD void smooth_stroke_range(const double* previous, uint32_t sp_min, uint32_t sp_max, double factor,
                               bool have_history, double* smoothed) {
  smoothed[0] = have_history ? ema_step(factor, previous[0], double(sp_min)) : double(sp_min);
  smoothed[1] = have_history ? ema_step(factor, previous[1], double(sp_max)) : double(sp_max);
}

// Products, sums and quotients rounded one by one: nvcc would fuse a product
// and a sum into an FMA (the CPU build never fuses: -ffp-contract=off).
SP_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
SP_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
SP_HD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// exp and pow from the same float operations on both backends (CUDA's expf
// and powf and glibc's differ in the last ulp, which moved an output byte by
// one in a few pixels). exp: x = n ln2 + r with |r| <= ln2 / 2 (Cody and
// Waite's split of ln 2: n * kLn2High is exact), e^r by its Taylor
// polynomial to r^7 (truncation below 2e-8 relative), times 2^n exactly.
constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
SP_HD float exp_same(float x) {
  if (!(x > -104.f)) return 0.f;  // below float's least subnormal (and NaN: a black pixel)
  if (x > 88.8f) return 3.40282347e38f * 2.f;  // +inf
#if defined(__CUDA_ARCH__)
  const float n = rintf(mul_rn(x, 1.44269504f));
#else
  const float n = std::rint(mul_rn(x, 1.44269504f));
#endif
  const float r = add_rn(add_rn(x, -mul_rn(n, kLn2High)), -mul_rn(n, kLn2Low));
  const float taylor[8] = {1.98412698e-4f, 1.38888889e-3f, 8.33333333e-3f, 4.16666667e-2f,  // 1/7! ... 1/0!
                           0.166666667f,   0.5f,           1.f,            1.f};
  float p = taylor[0];
  for (int k = 1; k < 8; ++k) p = add_rn(mul_rn(p, r), taylor[k]);
#if defined(__CUDA_ARCH__)
  return ldexpf(p, int(n));
#else
  return std::ldexp(p, int(n));
#endif
}
// ln of a positive finite x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), and
// ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| < 0.172: its series to t^9.
SP_HD float log_same(float x) {
  int e = 0;
#if defined(__CUDA_ARCH__)
  float m = frexpf(x, &e);
#else
  float m = std::frexp(x, &e);
#endif
  if (m < 0.707106781f) {
    m = mul_rn(m, 2.f);
    --e;
  }
  const float f = add_rn(m, -1.f);
  const float t = div_rn(f, add_rn(f, 2.f));
  const float t2 = mul_rn(t, t);
  const float odd[4] = {0.111111111f, 0.142857143f, 0.2f, 0.333333333f};  // 1/9, 1/7, 1/5, 1/3
  float q = odd[0];
  for (int k = 1; k < 4; ++k) q = add_rn(mul_rn(q, t2), odd[k]);
  const float two_t = mul_rn(t, 2.f);
  const float ln_m = add_rn(two_t, mul_rn(two_t, mul_rn(q, t2)));
  return add_rn(mul_rn(float(e), kLn2High), add_rn(mul_rn(float(e), kLn2Low), ln_m));
}
// base^power for base in [0, 1] and power > 0 (the stroke gamma).
SP_HD float pow_same(float base, float power) {
  return base > 0.f ? exp_same(mul_rn(power, log_same(base))) : 0.f;
}

// S = (1 - Sp)^gamma_s with Sp min-max normalized (Lu).
SP_HD float stroke_value(uint32_t sp, float lo, float hi, float gamma_s) {
  float normalized = hi > lo ? div_rn(add_rn(float(sp), -lo), add_rn(hi, -lo)) : 0.f;
  normalized = normalized < 0.f ? 0.f : (normalized > 1.f ? 1.f : normalized);
  const float s = add_rn(1.f, -normalized);
  return gamma_s == 1.f ? s : pow_same(s, gamma_s);
}

// T^gamma_i = (H^beta)^gamma_i = exp(gamma_i * beta * ln H).
SP_HD float texture_value(float beta, float ln_h, float gamma_i) {
  return exp_same(mul_rn(mul_rn(gamma_i, beta), ln_h));
}

SP_HD uint8_t to_u8(float v) {
  const float r = floorf(v + 0.5f);
  return uint8_t(r <= 0.f ? 0 : (r >= 255.f ? 255 : int(r)));
}

// Output pixel from the drawing value R = S * T in [0,1]. Gray: R as luma.
// Color: Lu's colour version replaces Y and keeps the chroma; for YCbCr,
// R-Y, G-Y and B-Y depend on chroma only, so adding the luma change to each
// channel keeps Cb and Cr. The luma is the exact fixed-point one (sum/256).
SP_HD uint32_t output_pixel(uint32_t in_px, float drawing, bool color) {
  const float y_new = mul_rn(drawing, 255.f);
  if (!color) {
    const uint32_t v = to_u8(y_new);
    return v | (v << 8) | (v << 16) | (in_px & 0xFF000000u);
  }
  const int r = int(in_px & 255u), g = int((in_px >> 8) & 255u), b = int((in_px >> 16) & 255u);
  const float delta = y_new - float(luma_sum(r, g, b)) * (1.f / 256.f);
  return uint32_t(to_u8(float(r) + delta)) | (uint32_t(to_u8(float(g) + delta)) << 8) |
         (uint32_t(to_u8(float(b) + delta)) << 16) | (in_px & 0xFF000000u);
}

// Screen-space texture lookup (tiled; a stretched texture has the frame's size).
SP_HD int texture_index(int x, int y, int tex_width, int tex_height) {
  return (y % tex_height) * tex_width + (x % tex_width);
}

// The beta system of Lu's eq. (9): (diag(ln^2 H) + lambda L) beta = ln H ln J,
// L the 4-neighbour graph Laplacian with Neumann borders.
SP_HD int neighbour_count(int x, int y, int w, int h) {
  return (x > 0) + (x + 1 < w) + (y > 0) + (y + 1 < h);
}
SP_HD float system_diagonal(float ln_h, int neighbours, float lambda) {
  return ln_h * ln_h + lambda * float(neighbours);
}

}  // namespace sp::pencil
