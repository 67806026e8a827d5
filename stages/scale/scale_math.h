#pragma once
// Per-pixel arithmetic of the scale stage, shared by scale_cpu.cpp and
// scale.cu so both backends agree bit for bit. Integer only.
//
// Geometry: pixel centres. Output pixel d of an axis with `src` input and
// `dst` output pixels covers [d, d+1) * src/dst in input coordinates, where
// input pixel i covers [i, i+1) and has its centre at i + 0.5 (the
// convention of swscale and OpenCV's INTER_LINEAR / INTER_AREA).
// - nearest: the input pixel that contains the output pixel's centre; a
//   centre exactly on a boundary takes the right/lower pixel.
// - bilinear: interpolates the two input pixels around the output centre,
//   (d + 0.5) * src/dst - 0.5, edges repeated; weights in 1/2048 steps.
// - area: the exact mean of the input over the output pixel's footprint
//   (box filter with fractional coverage at the ends), rounded once. On
//   integer upscales this replicates pixels; on other upscales it blends only
//   across input pixel boundaries ("sharp bilinear").
// Channels (alpha included) are filtered independently.
#include <cstdint>
#include <numeric>

#include "pipeline/hd.h"
#include "pipeline/image.h"

namespace sp {
enum class ScaleFilter { nearest, bilinear, area };
}

namespace sp::scale_detail {

SP_HD int imin(int a, int b) { return a < b ? a : b; }
SP_HD int imax(int a, int b) { return a > b ? a : b; }
SP_HD uint32_t channel(uint32_t p, int c) { return (p >> (8 * c)) & 0xFFu; }

// Largest input or output side: keeps every product below in 32 bits.
constexpr int kMaxSide = 16384;

struct NearestFilter {
  using Tap = int;
  int src_w, dst_w, src_h, dst_h;
  // floor((d + 0.5) * src / dst): the pixel holding the centre.
  SP_HD static int tap(int d, int src, int dst) { return ((2 * d + 1) * src) / (2 * dst); }
  SP_HD Tap x_tap(int d) const { return tap(d, src_w, dst_w); }
  SP_HD Tap y_tap(int d) const { return tap(d, src_h, dst_h); }
  SP_HD uint32_t pixel(const RgbaView& in, Tap x, Tap y) const { return in.row32(y)[x]; }
};

struct LinearTap {
  int i0, i1;
  int w1;  // weight of i1 in 1/2^kBits; i0 gets the rest
};

struct BilinearFilter {
  static constexpr int kBits = 11;  // 2D weights then need 22 bits: 255 << 22 fits in 32
  using Tap = LinearTap;
  int src_w, dst_w, src_h, dst_h;

  SP_HD static LinearTap tap(int d, int src, int dst) {
    // Centre in input pixel-index units: ((2d + 1) * src - dst) / (2 * dst).
    const int num = (2 * d + 1) * src - dst, den = 2 * dst;
    if (num <= 0) return {0, 0, 0};
    const int i0 = num / den;
    if (i0 >= src - 1) return {src - 1, src - 1, 0};
    const int rem = num - i0 * den;  // < den <= 2 * kMaxSide: rem << kBits fits
    return {i0, i0 + 1, ((rem << kBits) + den / 2) / den};
  }
  SP_HD Tap x_tap(int d) const { return tap(d, src_w, dst_w); }
  SP_HD Tap y_tap(int d) const { return tap(d, src_h, dst_h); }

  SP_HD uint32_t pixel(const RgbaView& in, Tap x, Tap y) const {
    constexpr uint32_t one = 1u << kBits;
    const uint32_t* r0 = in.row32(y.i0);
    const uint32_t* r1 = in.row32(y.i1);
    const uint32_t p00 = r0[x.i0], p01 = r0[x.i1], p10 = r1[x.i0], p11 = r1[x.i1];
    const uint32_t wx1 = uint32_t(x.w1), wx0 = one - wx1, wy1 = uint32_t(y.w1), wy0 = one - wy1;
    uint32_t out = 0;
    for (int c = 0; c < 4; ++c) {
      const uint32_t top = channel(p00, c) * wx0 + channel(p01, c) * wx1;
      const uint32_t bottom = channel(p10, c) * wx0 + channel(p11, c) * wx1;
      const uint32_t v = (top * wy0 + bottom * wy1 + (1u << (2 * kBits - 1))) >> (2 * kBits);
      out |= v << (8 * c);
    }
    return out;
  }
};

// One axis of the area filter in lowest terms: an output pixel is `src`
// units wide, an input pixel `dst` units (the true ratio src/dst reduced by
// its gcd), so every coverage is an exact integer.
struct AreaAxis {
  int src = 1, dst = 1;
};

struct AreaSpan {
  int begin, end;  // input pixels [begin, end)
  int lo, hi;      // footprint in axis units
};

template <class Acc>  // uint32_t when 255 * src_x * src_y fits, else uint64_t
struct AreaFilter {
  using Tap = AreaSpan;
  AreaAxis ax, ay;

  SP_HD static AreaSpan tap(int d, const AreaAxis& a) {
    const int lo = d * a.src, hi = lo + a.src;
    return {lo / a.dst, (hi + a.dst - 1) / a.dst, lo, hi};
  }
  SP_HD static uint32_t cover(const AreaSpan& s, int i, int unit) {
    return uint32_t(imin(s.hi, (i + 1) * unit) - imax(s.lo, i * unit));
  }
  SP_HD Tap x_tap(int d) const { return tap(d, ax); }
  SP_HD Tap y_tap(int d) const { return tap(d, ay); }

  SP_HD uint32_t pixel(const RgbaView& in, const Tap& x, const Tap& y) const {
    Acc sum[4] = {0, 0, 0, 0};
    for (int j = y.begin; j < y.end; ++j) {
      const uint32_t* row = in.row32(j);
      uint32_t line[4] = {0, 0, 0, 0};  // <= 255 * ax.src
      for (int i = x.begin; i < x.end; ++i) {
        const uint32_t w = cover(x, i, ax.dst), p = row[i];
        for (int c = 0; c < 4; ++c) line[c] += w * channel(p, c);
      }
      const Acc wy = cover(y, j, ay.dst);
      for (int c = 0; c < 4; ++c) sum[c] += wy * Acc(line[c]);
    }
    const Acc total = Acc(ax.src) * Acc(ay.src);
    uint32_t out = 0;
    for (int c = 0; c < 4; ++c) out |= uint32_t((sum[c] + total / 2) / total) << (8 * c);
    return out;
  }
};

inline AreaAxis area_axis(int src, int dst) {
  const int g = std::gcd(src, dst);
  return {src / g, dst / g};
}

// Whether the area sums of a ratio fit the 32-bit accumulator.
inline bool area_fits_32(const AreaAxis& ax, const AreaAxis& ay) {
  const uint64_t total = uint64_t(ax.src) * uint64_t(ay.src);
  return 255 * total + total / 2 < (uint64_t(1) << 32);
}

// Calls fn(filter) with the filter policy for `filter` between the two sizes.
template <class Fn>
void visit_filter(ScaleFilter filter, Size in, Size out, Fn&& fn) {
  switch (filter) {
    case ScaleFilter::nearest:
      return fn(NearestFilter{in.width, out.width, in.height, out.height});
    case ScaleFilter::bilinear:
      return fn(BilinearFilter{in.width, out.width, in.height, out.height});
    case ScaleFilter::area: {
      const AreaAxis ax = area_axis(in.width, out.width), ay = area_axis(in.height, out.height);
      if (area_fits_32(ax, ay)) return fn(AreaFilter<uint32_t>{ax, ay});
      return fn(AreaFilter<uint64_t>{ax, ay});
    }
  }
}

}  // namespace sp::scale_detail
