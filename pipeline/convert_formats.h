#pragma once
// Codec-side picture layouts for the colour conversions: how each PixelFormat
// is read (sources) and written (destinations), and the 2x2 block kernels of
// the 4:2:0 formats. Shared by convert_cpu.cpp and convert.cu.
#include "pipeline/convert_pixel.h"

namespace sp::convert_detail {

// ---- Sources (codec side -> RGBA) --------------------------------------

SP_HD int load8(const uint8_t* plane, size_t pitch, int x, int y) { return plane[size_t(y) * pitch + x]; }
// 16-bit little endian, read bytewise: any alignment, any host byte order.
SP_HD int load16(const uint8_t* plane, size_t pitch, int x, int y) {
  const uint8_t* p = plane + size_t(y) * pitch + 2 * size_t(x);
  return int(p[0]) | (int(p[1]) << 8);
}
SP_HD void store16(uint8_t* plane, size_t pitch, int x, int y, int v) {
  uint8_t* p = plane + size_t(y) * pitch + 2 * size_t(x);
  p[0] = uint8_t(v & 0xFF);
  p[1] = uint8_t(v >> 8);
}

// 4:2:0 sources expose luma(x, y) and chroma(i, j, u, v) in their own codes.
struct Yuv420pSource {
  static constexpr bool kSubsampled = true;
  static constexpr int kBits = 8;
  const uint8_t *y, *u, *v;
  size_t py, pu, pv;
  SP_HD int luma(int x, int yy) const { return load8(y, py, x, yy); }
  SP_HD void chroma(int i, int j, int& cu, int& cv) const {
    cu = load8(u, pu, i, j);
    cv = load8(v, pv, i, j);
  }
};

struct Nv12Source {
  static constexpr bool kSubsampled = true;
  static constexpr int kBits = 8;
  const uint8_t *y, *uv;
  size_t py, puv;
  SP_HD int luma(int x, int yy) const { return load8(y, py, x, yy); }
  SP_HD void chroma(int i, int j, int& cu, int& cv) const {
    cu = load8(uv, puv, 2 * i, j);
    cv = load8(uv, puv, 2 * i + 1, j);
  }
};

// 10 significant bits in the high bits of each 16-bit word.
struct P010Source {
  static constexpr bool kSubsampled = true;
  static constexpr int kBits = 10;
  const uint8_t *y, *uv;
  size_t py, puv;
  SP_HD int luma(int x, int yy) const { return load16(y, py, x, yy) >> 6; }
  SP_HD void chroma(int i, int j, int& cu, int& cv) const {
    cu = load16(uv, puv, 2 * i, j) >> 6;
    cv = load16(uv, puv, 2 * i + 1, j) >> 6;
  }
};

// Full-resolution sources expose rgba(x, y, k).
struct RgbaSource {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  const uint8_t* p;
  size_t pitch;
  SP_HD uint32_t rgba(int x, int y, const YuvToRgb&) const {
    const uint8_t* q = p + size_t(y) * pitch + 4 * size_t(x);
    return pack_rgba(q[0], q[1], q[2], q[3]);
  }
};

struct Bgr0Source {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  const uint8_t* p;
  size_t pitch;
  SP_HD uint32_t rgba(int x, int y, const YuvToRgb&) const {
    const uint8_t* q = p + size_t(y) * pitch + 4 * size_t(x);
    return pack_rgba(q[2], q[1], q[0], 255);
  }
};

struct Rgb24Source {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  const uint8_t* p;
  size_t pitch;
  SP_HD uint32_t rgba(int x, int y, const YuvToRgb&) const {
    const uint8_t* q = p + size_t(y) * pitch + 3 * size_t(x);
    return pack_rgba(q[0], q[1], q[2], 255);
  }
};

struct GraySource {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  const uint8_t* p;
  size_t pitch;
  SP_HD uint32_t rgba(int x, int y, const YuvToRgb& k) const {
    return yuv16_to_rgba(k, 16 * load8(p, pitch, x, y), k.c_zero16, k.c_zero16);
  }
};

struct Yuv444pSource {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  const uint8_t *y, *u, *v;
  size_t py, pu, pv;
  SP_HD uint32_t rgba(int x, int yy, const YuvToRgb& k) const {
    return yuv16_to_rgba(k, 16 * load8(y, py, x, yy), 16 * load8(u, pu, x, yy), 16 * load8(v, pv, x, yy));
  }
};

// One chroma sample (i, j) of a 4:2:0 source and its (up to) 2x2 luma block.
// Each luma pixel interpolates the four nearest chroma samples (centre
// siting): 9/16 own, 3/16 horizontal and vertical neighbours, 1/16 diagonal,
// with edge samples repeated.
template <class Src>
SP_HD void yuv420_block_to_rgba(const Src& s, const YuvToRgb& k, int i, int j, const RgbaView& dst) {
  const int w = dst.width, h = dst.height;
  const int cw = (w + 1) >> 1, ch = (h + 1) >> 1;
  const int il = max_int(i - 1, 0), ir = min_int(i + 1, cw - 1);
  const int jt = max_int(j - 1, 0), jb = min_int(j + 1, ch - 1);
  int u[3][3], v[3][3];  // [row: top, centre, bottom][col: left, centre, right]
  const int cols[3] = {il, i, ir}, rows[3] = {jt, j, jb};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) s.chroma(cols[c], rows[r], u[r][c], v[r][c]);
  for (int dy = 0; dy < 2; ++dy) {
    const int y = 2 * j + dy;
    if (y >= h) break;
    const int vr = dy ? 2 : 0;  // vertical neighbour row
    uint32_t* out = dst.row32(y);
    for (int dx = 0; dx < 2; ++dx) {
      const int x = 2 * i + dx;
      if (x >= w) break;
      const int hc = dx ? 2 : 0;  // horizontal neighbour column
      const int u16 = 9 * u[1][1] + 3 * u[1][hc] + 3 * u[vr][1] + u[vr][hc];
      const int v16 = 9 * v[1][1] + 3 * v[1][hc] + 3 * v[vr][1] + v[vr][hc];
      out[x] = yuv16_to_rgba(k, 16 * s.luma(x, y), u16, v16);
    }
  }
}

// ---- Destinations (RGBA -> codec side) -----------------------------------

struct Yuv420pDest {
  static constexpr bool kSubsampled = true;
  static constexpr int kBits = 8;
  uint8_t *y, *u, *v;
  size_t py, pu, pv;
  SP_HD void put_luma(int x, int yy, int val) const { y[size_t(yy) * py + x] = uint8_t(val); }
  SP_HD void put_chroma(int i, int j, int cu, int cv) const {
    u[size_t(j) * pu + i] = uint8_t(cu);
    v[size_t(j) * pv + i] = uint8_t(cv);
  }
};

struct Nv12Dest {
  static constexpr bool kSubsampled = true;
  static constexpr int kBits = 8;
  uint8_t *y, *uv;
  size_t py, puv;
  SP_HD void put_luma(int x, int yy, int val) const { y[size_t(yy) * py + x] = uint8_t(val); }
  SP_HD void put_chroma(int i, int j, int cu, int cv) const {
    uint8_t* q = uv + size_t(j) * puv + 2 * size_t(i);
    q[0] = uint8_t(cu);
    q[1] = uint8_t(cv);
  }
};

struct P010Dest {
  static constexpr bool kSubsampled = true;
  static constexpr int kBits = 10;
  uint8_t *y, *uv;
  size_t py, puv;
  SP_HD void put_luma(int x, int yy, int val) const { store16(y, py, x, yy, val << 6); }
  SP_HD void put_chroma(int i, int j, int cu, int cv) const {
    store16(uv, puv, 2 * i, j, cu << 6);
    store16(uv, puv, 2 * i + 1, j, cv << 6);
  }
};

// Packed 4-byte destinations are written bytewise: codec-side pitches need
// not be multiples of 4, and the stores still coalesce per warp.
SP_HD void store_bytes4(uint8_t* q, int b0, int b1, int b2, int b3) {
  q[0] = uint8_t(b0);
  q[1] = uint8_t(b1);
  q[2] = uint8_t(b2);
  q[3] = uint8_t(b3);
}

struct RgbaDest {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  uint8_t* p;
  size_t pitch;
  SP_HD void put(int x, int y, uint32_t px, const RgbToYuv&) const {
    store_bytes4(p + size_t(y) * pitch + 4 * size_t(x), red(px), green(px), blue(px), int(px >> 24));
  }
};

struct Bgr0Dest {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  uint8_t* p;
  size_t pitch;
  SP_HD void put(int x, int y, uint32_t px, const RgbToYuv&) const {
    store_bytes4(p + size_t(y) * pitch + 4 * size_t(x), blue(px), green(px), red(px), 255);
  }
};

struct Rgb24Dest {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  uint8_t* p;
  size_t pitch;
  SP_HD void put(int x, int y, uint32_t px, const RgbToYuv&) const {
    uint8_t* q = p + size_t(y) * pitch + 3 * size_t(x);
    q[0] = uint8_t(red(px));
    q[1] = uint8_t(green(px));
    q[2] = uint8_t(blue(px));
  }
};

struct GrayDest {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  uint8_t* p;
  size_t pitch;
  SP_HD void put(int x, int y, uint32_t px, const RgbToYuv& k) const {
    p[size_t(y) * pitch + x] = uint8_t(rgb_to_luma(k, red(px), green(px), blue(px)));
  }
};

struct Yuv444pDest {
  static constexpr bool kSubsampled = false;
  static constexpr int kBits = 8;
  uint8_t *y, *u, *v;
  size_t py, pu, pv;
  SP_HD void put(int x, int yy, uint32_t px, const RgbToYuv& k) const {
    const int r = red(px), g = green(px), b = blue(px);
    int cu, cv;
    rgb_sum_to_chroma(k, r, g, b, 0, cu, cv);
    y[size_t(yy) * py + x] = uint8_t(rgb_to_luma(k, r, g, b));
    u[size_t(yy) * pu + x] = uint8_t(cu);
    v[size_t(yy) * pv + x] = uint8_t(cv);
  }
};

// One 2x2 block of RGBA -> its luma and the block's mean chroma. Pixels past
// an odd edge repeat the last column/row, so edge chroma averages the pixels
// that exist.
template <class Dst>
SP_HD void rgba_block_to_yuv420(const RgbaView& src, const RgbToYuv& k, int i, int j, const Dst& d) {
  const int w = src.width, h = src.height;
  const int x0 = 2 * i, y0 = 2 * j;
  const int x1 = min_int(x0 + 1, w - 1), y1 = min_int(y0 + 1, h - 1);
  const uint32_t* r0 = src.row32(y0);
  const uint32_t* r1 = src.row32(y1);
  const uint32_t p[4] = {r0[x0], r0[x1], r1[x0], r1[x1]};
  int rs = 0, gs = 0, bs = 0;
  for (int n = 0; n < 4; ++n) {
    rs += red(p[n]);
    gs += green(p[n]);
    bs += blue(p[n]);
  }
  int cu, cv;
  rgb_sum_to_chroma(k, rs, gs, bs, 2, cu, cv);
  d.put_chroma(i, j, cu, cv);
  d.put_luma(x0, y0, rgb_to_luma(k, red(p[0]), green(p[0]), blue(p[0])));
  if (x0 + 1 < w) d.put_luma(x1, y0, rgb_to_luma(k, red(p[1]), green(p[1]), blue(p[1])));
  if (y0 + 1 < h) {
    d.put_luma(x0, y1, rgb_to_luma(k, red(p[2]), green(p[2]), blue(p[2])));
    if (x0 + 1 < w) d.put_luma(x1, y1, rgb_to_luma(k, red(p[3]), green(p[3]), blue(p[3])));
  }
}

// Calls fn(source) with the source view for `v`'s format.
template <class Fn>
void visit_source(const PlanarView& v, Fn&& fn) {
  uint8_t* const* p = v.plane;
  switch (v.format) {
    case PixelFormat::rgba:
      return fn(RgbaSource{p[0], v.pitch[0]});
    case PixelFormat::bgr0:
      return fn(Bgr0Source{p[0], v.pitch[0]});
    case PixelFormat::rgb24:
      return fn(Rgb24Source{p[0], v.pitch[0]});
    case PixelFormat::gray:
      return fn(GraySource{p[0], v.pitch[0]});
    case PixelFormat::yuv444p:
      return fn(Yuv444pSource{p[0], p[1], p[2], v.pitch[0], v.pitch[1], v.pitch[2]});
    case PixelFormat::yuv420p:
      return fn(Yuv420pSource{p[0], p[1], p[2], v.pitch[0], v.pitch[1], v.pitch[2]});
    case PixelFormat::nv12:
      return fn(Nv12Source{p[0], p[1], v.pitch[0], v.pitch[1]});
    case PixelFormat::p010:
      return fn(P010Source{p[0], p[1], v.pitch[0], v.pitch[1]});
  }
}

template <class Fn>
void visit_dest(const PlanarView& v, Fn&& fn) {
  uint8_t* const* p = v.plane;
  switch (v.format) {
    case PixelFormat::rgba:
      return fn(RgbaDest{p[0], v.pitch[0]});
    case PixelFormat::bgr0:
      return fn(Bgr0Dest{p[0], v.pitch[0]});
    case PixelFormat::rgb24:
      return fn(Rgb24Dest{p[0], v.pitch[0]});
    case PixelFormat::gray:
      return fn(GrayDest{p[0], v.pitch[0]});
    case PixelFormat::yuv444p:
      return fn(Yuv444pDest{p[0], p[1], p[2], v.pitch[0], v.pitch[1], v.pitch[2]});
    case PixelFormat::yuv420p:
      return fn(Yuv420pDest{p[0], p[1], p[2], v.pitch[0], v.pitch[1], v.pitch[2]});
    case PixelFormat::nv12:
      return fn(Nv12Dest{p[0], p[1], v.pitch[0], v.pitch[1]});
    case PixelFormat::p010:
      return fn(P010Dest{p[0], p[1], v.pitch[0], v.pitch[1]});
  }
}

}  // namespace sp::convert_detail
