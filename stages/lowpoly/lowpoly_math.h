#pragma once
// Per-pixel and per-triangle arithmetic of the lowpoly stage, compiled by g++
// and nvcc alike so the CPU and CUDA backends agree bit for bit. Integer only.
//
// Geometry: mesh vertices are lattice points (x, y) with 0 <= x <= W and
// 0 <= y <= H; pixel (x, y) is sampled at the lattice point (x, y). The four
// corners (0,0), (W,0), (0,H), (W,H) are always vertices, so the mesh covers
// the rectangle [0,W] x [0,H] and with it every pixel sample. A sample on a
// shared edge or vertex belongs to the triangle that contains the sample
// nudged by (+eps, +eps^2) (right, then down): a top-left fill rule that puts
// every pixel in exactly one triangle (see owns_edge).
#include <cmath>
#include <cstdint>

#include "pipeline/hd.h"
#include "pipeline/image.h"

namespace sp::lowpoly {

// Packed vertex: x in the low 16 bits, y in the high 16 (sides up to 16383 + 1).
SP_HD uint32_t pack_xy(int x, int y) { return uint32_t(x) | (uint32_t(y) << 16); }
SP_HD int unpack_x(uint32_t p) { return int(p & 0xFFFFu); }
SP_HD int unpack_y(uint32_t p) { return int(p >> 16); }

// A triangle as three packed vertices, counter-clockwise in (x right, y down)
// pixel coordinates read as a right-handed plane: orient(a, b, c) > 0.
struct Triangle {
  uint32_t a, b, c;
};

SP_HD int luma_of(uint32_t rgba) {
  const int r = int(rgba & 0xFF), g = int((rgba >> 8) & 0xFF), b = int((rgba >> 16) & 0xFF);
  return (77 * r + 150 * g + 29 * b + 128) >> 8;  // BT.601 in 8-bit fixed point
}

// Sobel |gx| + |gy| of the luma around (x, y), edges replicated, scaled to
// 0..255 (saturating at half the largest possible gradient).
SP_HD int sobel_edge(const uint8_t* luma, int w, int h, int x, int y) {
  const int xm = x > 0 ? x - 1 : 0, xp = x < w - 1 ? x + 1 : w - 1;
  const int ym = y > 0 ? y - 1 : 0, yp = y < h - 1 ? y + 1 : h - 1;
  const uint8_t* r0 = luma + size_t(ym) * w;
  const uint8_t* r1 = luma + size_t(y) * w;
  const uint8_t* r2 = luma + size_t(yp) * w;
  const int gx = (r0[xp] + 2 * r1[xp] + r2[xp]) - (r0[xm] + 2 * r1[xm] + r2[xm]);
  const int gy = (r2[xm] + 2 * r2[x] + r2[xp]) - (r0[xm] + 2 * r0[x] + r0[xp]);
  const int mag = (gx < 0 ? -gx : gx) + (gy < 0 ? -gy : gy);  // 0 .. 2040
  const int e = (mag + 2) >> 2;
  return e > 255 ? 255 : e;
}

// Selection weight of a pixel: 1 + edge_weight * edge/255 in units of 1/4080
// (edge_weight_q16 = edge_weight * 16, rounded).
constexpr uint32_t kWeightOne = 16 * 255;
SP_HD uint32_t point_weight(int edge, uint32_t edge_weight_q16) { return kWeightOne + edge_weight_q16 * uint32_t(edge); }

// Counter-based randomness: a hash of the pixel position and the seed only
// (never the frame index), so static content keeps its points.
SP_HD uint32_t position_hash(int x, int y, uint64_t seed) {
  uint64_t z = (uint64_t(uint32_t(y)) << 32 | uint32_t(x)) ^ (seed * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;  // splitmix64 finalizer
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return uint32_t(z >> 32);
}

// Pixel (x, y) with 1 <= x < W, 1 <= y < H is a vertex with probability
// min(1, N w / sum w): hash < scale * w, scale = floor(N 2^32 / sum w).
SP_HD uint64_t selection_scale(int64_t expected_points, uint64_t weight_sum) {
  return weight_sum == 0 ? 0 : (uint64_t(expected_points) << 32) / weight_sum;
}
SP_HD bool select_point(int x, int y, uint64_t seed, uint32_t weight, uint64_t scale) {
  return uint64_t(position_hash(x, y, seed)) < scale * uint64_t(weight);
}

SP_HD int64_t orient(int ax, int ay, int bx, int by, int cx, int cy) {
  return int64_t(bx - ax) * (cy - ay) - int64_t(by - ay) * (cx - ax);
}

// Whether a triangle owns the samples on its edge a -> b: the nudged sample
// (+eps, +eps^2) is inside exactly when -dy*eps + dx*eps^2 > 0.
SP_HD bool owns_edge(int dx, int dy) { return dy < 0 || (dy == 0 && dx > 0); }

SP_HD bool edge_covers(int ax, int ay, int bx, int by, int px, int py) {
  // 32 bits are exact: coordinates stay within 16383 (kMaxSide), so each product is below 2^28.
  const int e = (bx - ax) * (py - ay) - (by - ay) * (px - ax);
  return e > 0 || (e == 0 && owns_edge(bx - ax, by - ay));
}

// Whether the triangle owns pixel sample (px, py) under the fill rule.
SP_HD bool covers(const Triangle& t, int px, int py) {
  const int ax = unpack_x(t.a), ay = unpack_y(t.a), bx = unpack_x(t.b), by = unpack_y(t.b);
  const int cx = unpack_x(t.c), cy = unpack_y(t.c);
  return edge_covers(ax, ay, bx, by, px, py) && edge_covers(bx, by, cx, cy, px, py) &&
         edge_covers(cx, cy, ax, ay, px, py);
}

struct PixelBox {
  int x0, y0, x1, y1;  // inclusive; empty when x0 > x1 or y0 > y1
};

SP_HD int imin3(int a, int b, int c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }
SP_HD int imax3(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

// Pixel samples that may belong to the triangle, clipped to the frame.
SP_HD PixelBox pixel_box(const Triangle& t, int w, int h) {
  const int ax = unpack_x(t.a), bx = unpack_x(t.b), cx = unpack_x(t.c);
  const int ay = unpack_y(t.a), by = unpack_y(t.b), cy = unpack_y(t.c);
  PixelBox b{imin3(ax, bx, cx), imin3(ay, by, cy), imax3(ax, bx, cx), imax3(ay, by, cy)};
  if (b.x1 > w - 1) b.x1 = w - 1;
  if (b.y1 > h - 1) b.y1 = h - 1;
  return b;
}

// Rounded mean of channel sums over `count` pixels; count 0 gives 0. (Sums are
// 64-bit: one triangle may cover most of a 16383 x 16383 frame.)
SP_HD uint32_t mean_color(const uint64_t sum[4], uint32_t count) {
  if (count == 0) return 0;
  uint32_t out = 0;
  for (int c = 0; c < 4; ++c) out |= uint32_t((sum[c] + count / 2) / count) << (8 * c);
  return out;
}

// The seed's centre sample: the pixel at the vertex centroid, clamped to the frame.
SP_HD uint32_t centroid_color(const Triangle& t, const RgbaView& in) {
  int x = (unpack_x(t.a) + unpack_x(t.b) + unpack_x(t.c)) / 3;
  int y = (unpack_y(t.a) + unpack_y(t.b) + unpack_y(t.c)) / 3;
  x = x < in.width - 1 ? x : in.width - 1;
  y = y < in.height - 1 ? y : in.height - 1;
  return in.row32(y)[x];
}

SP_HD bool on_frame_border(int ax, int ay, int bx, int by, int w, int h) {
  return (ax == bx && (ax == 0 || ax == w)) || (ay == by && (ay == 0 || ay == h));
}

// Whether sample (px, py) lies within line_q4/8 pixels (half the line width,
// width in quarter pixels) of the line through edge a -> b: 64 e^2 < q4^2 |d|^2.
SP_HD bool near_edge(int ax, int ay, int bx, int by, int px, int py, int line_q4) {
  const int64_t e = orient(ax, ay, bx, by, px, py);
  const int64_t dx = bx - ax, dy = by - ay;
  return 64 * e * e < int64_t(line_q4) * line_q4 * (dx * dx + dy * dy);
}

// Whether a pixel of triangle t is drawn in the line colour: near one of the
// triangle's edges that is not on the frame border.
SP_HD bool on_line(const Triangle& t, int px, int py, int line_q4, int w, int h) {
  const uint32_t v[3] = {t.a, t.b, t.c};
  for (int i = 0; i < 3; ++i) {
    const int ax = unpack_x(v[i]), ay = unpack_y(v[i]), bx = unpack_x(v[(i + 1) % 3]), by = unpack_y(v[(i + 1) % 3]);
    if (!on_frame_border(ax, ay, bx, by, w, h) && near_edge(ax, ay, bx, by, px, py, line_q4)) return true;
  }
  return false;
}

// Temporal re-sampling: a tile changed when its edge sum moved by more than
// threshold (in 1/256 edge units per pixel) from the sum at its last re-sample.
SP_HD bool tile_changed(uint32_t sum, uint32_t reference, uint32_t pixels, uint64_t threshold_q8) {
  const uint64_t diff = sum > reference ? sum - reference : reference - sum;
  return diff * 256 > threshold_q8 * pixels;
}

// Temporal refresh: each tile also re-samples once per `period` seconds, when
// its clock, phase-shifted by a hash of the tile, enters a new period between
// the previous frame and this one. Its vertices then depend only on the last
// period's frames, so a run started a period earlier has the same ones. The
// phase is a multiple of 2^-32 and the rest is a division and an addition:
// the CPU and the GPU get the same bits.
SP_HD bool tile_refresh_due(int tx, int ty, uint64_t seed, double period, double previous_time, double time) {
  if (!(period > 0)) return false;
  const double phase = double(position_hash(tx, ty, seed ^ 0x7E5A3B1Dull)) * (1.0 / 4294967296.0);
  return floor(time / period + phase) != floor(previous_time / period + phase);
}

// Temporal colour smoothing: 8.8 fixed-point state per channel,
// s' = (a s + (256 - a) 256 c + 128) >> 8; a fixed colour is a fixed point.
// The first frame starts the state at its own colour.
SP_HD uint32_t smooth_color(uint16_t* state, uint32_t color, uint32_t alpha_q8, bool first) {
  uint32_t out = 0;
  for (int c = 0; c < 4; ++c) {
    const uint32_t target = ((color >> (8 * c)) & 0xFF) << 8;
    const uint32_t s = first ? target : (alpha_q8 * state[c] + (256 - alpha_q8) * target + 128) >> 8;
    state[c] = uint16_t(s);
    const uint32_t v = (s + 128) >> 8;
    out |= (v > 255 ? 255u : v) << (8 * c);
  }
  return out;
}

}  // namespace sp::lowpoly
