#pragma once
// Per-particle arithmetic of the halftone stage shared by the CPU and CUDA
// backends (SP_HD): the counter-based random numbers, the Kaiser-Bessel
// window of the NFFT, the near-field correction of the regularized kernel,
// the bilinear force sampling and the disc coverage. See README.md.
#include <cmath>
#include <cstdint>

#include "pipeline/hd.h"
#include "stages/halftone/float2.h"

namespace sp::halftone {

constexpr int kMaxTaylor = 12;  // largest accuracy_p (Taylor degree)
constexpr int kMaxCutoff = 10;  // largest accuracy_m (window half-width)

SP_HD int imin(int a, int b) { return a < b ? a : b; }
SP_HD int imax(int a, int b) { return a > b ? a : b; }

// ---- counter-based random numbers (identical on both backends) -------------
SP_HD uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// A 64-bit value from (seed, stream, a, b): no state, so any thread can draw
// the number of any particle and both backends draw the same ones.
SP_HD uint64_t rng_bits(uint64_t seed, uint32_t stream, uint32_t a, uint32_t b) {
  return mix64(mix64(seed ^ (uint64_t(stream) << 32 | a)) ^ (uint64_t(b) * 0xD1B54A32D192ED03ull));
}
SP_HD float unit_float(uint64_t bits) { return float(bits >> 40) * (1.0f / 16777216.0f); }  // [0, 1)

enum RngStream : uint32_t { kStreamInit = 1, kStreamShake = 2, kStreamKeep = 3, kStreamAdd = 4, kStreamHandover = 5 };

// ---- per-frame numbers (host for the CPU backend, one device thread for CUDA) ----
struct CountRule {
  double dots_per_pixel = 0;
  int dots = 0;  // explicit count, 0 = from the ink sum
  int capacity = 0;
  float step = 0;
};

struct FrameNumbers {
  int count = 0;      // particles this frame
  int kept = 0;       // warm start: particles kept from the previous frame
  float lambda = 0;   // attraction scale: count / ink sum (charge neutrality)
  float step_px = 0;  // tau in pixels: step * spacing^2
  float spacing = 1;  // mean dot spacing (pixels) where the ink is 1
  double ink_sum = 0;
  // Warm frames: iterations run this frame; the totals over all warm frames
  // since configure (the mean goes to the stage counters).
  int iterations = 0;
  int keep_iterating = 0;  // the device's loop condition: 1 while another iteration is due
  int active = 0;          // the dots an iteration moves: count, and 0 once a warm frame has stopped
  long long warm_frames = 0, warm_iterations = 0;
};

SP_HD float squared_move(float2 from, float2 to) {
  const float dx = to.x - from.x, dy = to.y - from.y;
  return dx * dx + dy * dy;
}

// Where a warm frame draws a dot (hold_distance): where the last frame drew
// it, until its particle has moved more than `hold` pixels from there. A dot
// the relaxation only nudges then repeats to the pixel, which an encoder
// codes as a skipped block; one that follows the picture moves with it.
SP_HD float2 drawn_position(float2 particle, float2 last_drawn, float hold) {
  return squared_move(last_drawn, particle) > hold * hold ? particle : last_drawn;
}

// Whether a warm frame iterates again after `done` iterations whose last moved
// the dots by sum_sq_move (px^2, summed over the count dots): a frame stops at
// max iterations, or once the dots' RMS move falls under tolerance dot spacings
// (tolerance 0: always max).
SP_HD bool keep_iterating(int done, int max, double sum_sq_move, int count, float spacing, float tolerance) {
  if (done >= max || count <= 0) return false;
  if (tolerance <= 0.f || done == 0) return true;
  const double limit = double(tolerance) * spacing;
  return sum_sq_move > limit * limit * count;
}

// This frame's numbers; the warm-frame totals carry on from the previous frame's.
SP_HD FrameNumbers frame_numbers(const CountRule& r, double ink_sum, int kept, const FrameNumbers& previous) {
  FrameNumbers f;
  f.warm_frames = previous.warm_frames;
  f.warm_iterations = previous.warm_iterations;
  f.ink_sum = ink_sum;
  const double want = r.dots > 0 ? double(r.dots) : floor(ink_sum * r.dots_per_pixel + 0.5);
  f.count = ink_sum > 0 ? int(want < double(r.capacity) ? want : double(r.capacity)) : 0;
  f.kept = kept < f.count ? kept : f.count;
  f.lambda = f.count > 0 ? float(double(f.count) / ink_sum) : 0.f;
  f.spacing = f.count > 0 ? float(sqrt(ink_sum / double(f.count))) : 1.f;
  f.step_px = r.step * f.spacing * f.spacing;
  f.active = f.count;
  return f;
}

// ---- Kaiser-Bessel window (NFFT B and B^T) ----------------------------------
// phi(t) = sinh(b sqrt(m^2 - t^2)) / (pi sqrt(m^2 - t^2)) for |t| < m in grid
// units t = n x; its Fourier transform is I0(m sqrt(b^2 - w^2)) (host side).
// Both are divided by phi(0) so that spread grids stay near 1 in float.
struct Window {
  float b = 0;      // pi (2 - 1/sigma)
  float m2 = 0;     // m^2
  float inv_peak = 0;  // 1 / phi(0): keeps grid values near 1 (float range)
  int m = 0;
};

SP_HD float kb_window(const Window& w, float t) {
  const float a = w.m2 - t * t;
  if (a <= 0.f) return 0.f;
  const float s = sqrtf(a);
  return w.inv_peak * (s < 1e-6f ? w.b * 0.31830988618f : sinhf(w.b * s) / (3.14159265359f * s));
}

// Weights of the 2m grid points l = floor(u) - m + 1 + k (k = 0..2m-1) that a
// node at grid coordinate u touches. Returns floor(u) - m + 1.
SP_HD int window_weights(const Window& w, float u, float* out) {
  const float fl = floorf(u);
  const int first = int(fl) - w.m + 1;
  for (int k = 0; k < 2 * w.m; ++k) out[k] = kb_window(w, u - float(first + k));
  return first;
}

// ---- regularized kernel: the near-field correction ---------------------------
// Far field uses the gradient of K_R, which equals log r for r >= eps and is
// an even polynomial log(eps) + sum_j a_j q^(2j) (q = r/eps) below eps. The
// near field adds G - grad K_R = d / eps^2 (1/q^2 - sum_j coef[j-1] q^(2j-2)),
// coef[j-1] = 2 j a_j, for neighbours closer than eps (pixel units here).
struct NearKernel {
  float eps = 0;       // near-field radius in pixels
  float inv_eps2 = 0;  // 1 / eps^2
  int terms = 0;       // p - 1
  float coef[kMaxTaylor] = {};
};

// Correction on a particle from a neighbour at offset d = p_self - p_other;
// zero beyond eps and for coincident particles.
SP_HD void near_correction(const NearKernel& k, float dx, float dy, float& fx, float& fy) {
  const float r2 = dx * dx + dy * dy;
  const float q2 = r2 * k.inv_eps2;
  if (q2 >= 1.f || r2 < 1e-12f) return;
  float poly = 0.f;
  for (int j = k.terms - 1; j >= 0; --j) poly = poly * q2 + k.coef[j];
  const float s = k.inv_eps2 * (1.f / q2 - poly);
  fx += s * dx;
  fy += s * dy;
}

// ---- bilinear sampling of a per-pixel force field -----------------------------
// Field samples sit at pixel centres (i + 0.5, j + 0.5); edges are clamped.
SP_HD void sample_field(const float* fx, const float* fy, int w, int h, float px, float py, float& ox, float& oy) {
  float x = px - 0.5f, y = py - 0.5f;
  x = fminf(fmaxf(x, 0.f), float(w - 1));
  y = fminf(fmaxf(y, 0.f), float(h - 1));
  const int x0 = imin(int(x), imax(w - 2, 0)), y0 = imin(int(y), imax(h - 2, 0));
  const int x1 = imin(x0 + 1, w - 1), y1 = imin(y0 + 1, h - 1);
  const float ax = x - float(x0), ay = y - float(y0);
  const size_t i00 = size_t(y0) * w + x0, i01 = size_t(y0) * w + x1, i10 = size_t(y1) * w + x0,
               i11 = size_t(y1) * w + x1;
  ox = (1 - ay) * ((1 - ax) * fx[i00] + ax * fx[i01]) + ay * ((1 - ax) * fx[i10] + ax * fx[i11]);
  oy = (1 - ay) * ((1 - ax) * fy[i00] + ax * fy[i01]) + ay * ((1 - ax) * fy[i10] + ax * fy[i11]);
}

// Darkness of the nearest pixel (pixel units), for sampling and warm starts.
SP_HD float darkness_at(const float* dark, int w, int h, float px, float py) {
  const int x = imin(imax(int(px), 0), w - 1), y = imin(imax(int(py), 0), h - 1);
  return dark[size_t(y) * w + x];
}

// Luma of an RGBA8 pixel in [0, 1] (BT.709 weights), darkness = 1 - luma.
SP_HD float pixel_darkness(uint32_t p) {
  const float r = float(p & 0xFF), g = float((p >> 8) & 0xFF), b = float((p >> 16) & 0xFF);
  return 1.f - (0.2126f * r + 0.7152f * g + 0.0722f * b) * (1.f / 255.f);
}

// Ink of an RGBA8 pixel: 0 at the background's luma, 1 at the dot colour's.
// Colour stippling measures one component instead of the luma (weight e_c).
struct InkScale {
  float weight[3] = {0.2126f, 0.7152f, 0.0722f};  // BT.709 luma
  float background_luma = 255;  // 0..255
  float inv_contrast = -1.f / 255;  // 1 / (dot luma - background luma)
};
SP_HD float pixel_ink(uint32_t p, const InkScale& s) {
  const float l = s.weight[0] * float(p & 0xFF) + s.weight[1] * float((p >> 8) & 0xFF) +
                  s.weight[2] * float((p >> 16) & 0xFF);
  return fminf(fmaxf((l - s.background_luma) * s.inv_contrast, 0.f), 1.f);
}

// Anti-aliased disc coverage of a pixel centre at distance dist from the dot
// centre: a one-pixel linear ramp across the rim.
SP_HD float disc_coverage(float dist, float radius) { return fminf(fmaxf(radius - dist + 0.5f, 0.f), 1.f); }

// Clamp a particle into the image domain [0, w) x [0, h).
SP_HD float clamp_coord(float v, int size) { return fminf(fmaxf(v, 0.f), float(size) - 1e-3f); }

}  // namespace sp::halftone

namespace sp::halftone {

// ---- particle life: birth, survival, motion --------------------------------
constexpr int kSampleTries = 256;

// Rejection sampling of one dot for `slot`: uniform candidates accepted with
// probability ink(x) (a cold start's dots; warm births: sample_by_growth).
SP_HD float2 sample_particle(const float* ink, int w, int h, uint64_t seed, uint32_t stream, uint32_t slot) {
  float2 p = {0.5f * w, 0.5f * h};
  for (int t = 0; t < kSampleTries; ++t) {
    const uint64_t a = rng_bits(seed, stream, slot, uint32_t(t));
    p.x = clamp_coord(unit_float(a) * float(w), w);
    p.y = clamp_coord(unit_float(a << 24) * float(h), h);
    const float u = unit_float(rng_bits(seed, stream + 16, slot, uint32_t(t)));
    if (u < darkness_at(ink, w, h, p.x, p.y)) return p;
  }
  return p;
}

// Ink growth of a warm-started frame at pixel i: where its births go.
SP_HD float ink_growth(const float* ink, const float* old_ink, size_t i) { return fmaxf(ink[i] - old_ink[i], 0.f); }

// A warm-started frame's birth for `slot`: pixel i with probability
// growth_i / total, from the inclusive prefix sums `growth_cdf` of
// ink_growth (total > 0), at a uniform place inside it. The dots are born
// where the picture got darker, not scattered over still regions, where each
// would push its neighbours aside.
SP_HD float2 sample_by_growth(const double* growth_cdf, int w, int h, uint64_t seed, uint32_t slot) {
  const size_t pixels = size_t(w) * h;
  const uint64_t a = rng_bits(seed, kStreamAdd, slot, 0), b = rng_bits(seed, kStreamAdd, slot, 1);
  const double target = double(a >> 11) * (1.0 / 9007199254740992.0) * growth_cdf[pixels - 1];
  size_t lo = 0, hi = pixels - 1;  // the first pixel whose prefix sum exceeds target
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (growth_cdf[mid] > target) hi = mid; else lo = mid + 1;
  }
  // float(x) + u rounds up to x + 1 when u is within half an ulp of 1.
  const auto inside = [](size_t cell, float u) { return fminf(float(cell) + u, nextafterf(float(cell + 1), 0.f)); };
  return {inside(lo % size_t(w), unit_float(b)), inside(lo / size_t(w), unit_float(b << 24))};
}

// More survivors than dots wanted (kept > count): the s = kept - count
// dropped are spread evenly over the survivors' order (the cells, row by
// row): survivor j goes when floor((j + 1) s / kept) > floor(j s / kept),
// and the others close up to slot j - floor(j s / kept). Dropping the last s
// took them all from the picture's bottom right, which a fade thinned out
// frame after frame (a 200x150 fade: 25 dots in the corner for 32 of ink).
SP_HD bool surplus_dropped(int j, int kept, int count) {
  const long long s = kept - count;
  return s > 0 && (j + 1) * s / kept > j * s / kept;
}
SP_HD int survivor_slot(int j, int kept, int count) {
  const long long s = kept > count ? kept - count : 0;
  return int(j - j * s / kept);
}

// Warm start: a dot survives with probability new ink / old ink at its place.
SP_HD bool keep_particle(float2 p, const float* ink, const float* old_ink, int w, int h, uint64_t seed, uint32_t slot) {
  const float u = unit_float(rng_bits(seed, kStreamKeep, slot, 0));
  return u * darkness_at(old_ink, w, h, p.x, p.y) <= darkness_at(ink, w, h, p.x, p.y);
}

// p <- p + tau (F_A - F_R), the move capped at max_move, plus shaking.
// `repulsion` is sum (p - p_b) / |p - p_b|^2 (pointing away from the others).
SP_HD float2 move_particle(float2 p, float2 repulsion, float2 attraction, float step_px, float max_move, float shake,
                           uint64_t seed, uint32_t slot, uint32_t iteration, int w, int h) {
  float dx = step_px * (attraction.x + repulsion.x), dy = step_px * (attraction.y + repulsion.y);
  const float len2 = dx * dx + dy * dy;
  if (len2 > max_move * max_move) {
    const float f = max_move / sqrtf(len2);
    dx *= f;
    dy *= f;
  }
  if (shake > 0.f) {
    const uint64_t a = rng_bits(seed, kStreamShake, slot, iteration);
    dx += shake * (2.f * unit_float(a) - 1.f);
    dy += shake * (2.f * unit_float(a << 24) - 1.f);
  }
  return {clamp_coord(p.x + dx, w), clamp_coord(p.y + dy, h)};
}

// Per-frame seed: frames since the last configure, so reruns repeat.
SP_HD uint64_t frame_seed(uint64_t seed, int64_t frame) { return mix64(seed * 0x9E3779B97F4A7C15ull + uint64_t(frame)); }

// ---- rendering ---------------------------------------------------------------
struct RenderParams {
  float radius = 1;
  float background[3] = {255, 255, 255};
  float dot[3] = {0, 0, 0};
};

// Ink of pixel (x, y): the coverage by the sorted dots of the cells around it
// that `visible` accepts (all of them but in a seam's handover). Only the
// cells that meet the box a disc can reach from the pixel are read (the
// near field's cells are several dot radii wide: mostly one cell, not nine);
// the dots left out would add exact zeros, so the sum is the same to the bit.
struct CellGrid {
  const int* cell_start;
  int cells_x, cells_y;
  float cell_w, cell_h;
  // How far a drawn dot may lie outside the cell its particle sorted into:
  // a held dot (hold_distance) stays drawn up to that far from the particle.
  float stray = 0.f;
};

template <class Visible>
SP_HD float disc_cover(int x, int y, const float2* pos, const CellGrid& g, float radius, Visible visible) {
  const float px = float(x) + 0.5f, py = float(y) + 0.5f;
  // disc_coverage is 0 from radius + 0.5 on; the margin covers rounding.
  const float reach = radius + 0.5f + 1e-3f + g.stray;
  const int x0 = imax(int(floorf((px - reach) / g.cell_w)), 0), x1 = imin(int((px + reach) / g.cell_w), g.cells_x - 1);
  const int y0 = imax(int(floorf((py - reach) / g.cell_h)), 0), y1 = imin(int((py + reach) / g.cell_h), g.cells_y - 1);
  float cover = 0.f;
  for (int j = y0; j <= y1; ++j) {
    const int row = j * g.cells_x;
    const int lo = g.cell_start[row + x0], hi = g.cell_start[row + x1 + 1];
    for (int i = lo; i < hi; ++i) {
      if (!visible(pos[i])) continue;
      const float dx = pos[i].x - px, dy = pos[i].y - py;
      cover += disc_coverage(sqrtf(dx * dx + dy * dy), radius);
    }
  }
  return cover;
}

// The pixel's colour at `cover`, clamped to 1: overlapping discs ink once.
SP_HD uint32_t shade(float cover, const RenderParams& r) {
  cover = fminf(cover, 1.f);
  uint32_t out = 0xFF000000u;
  for (int c = 0; c < 3; ++c) {
    const float v = r.background[c] + (r.dot[c] - r.background[c]) * cover;
    out |= uint32_t(fminf(fmaxf(v + 0.5f, 0.f), 255.f)) << (8 * c);
  }
  return out;
}

struct EveryDot {
  SP_HD bool operator()(float2) const { return true; }
};

SP_HD uint32_t render_pixel(int x, int y, const float2* pos, const CellGrid& g, const RenderParams& r) {
  return shade(disc_cover(x, y, pos, g, r.radius, EveryDot{}), r);
}

}  // namespace sp::halftone
