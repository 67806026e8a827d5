#pragma once
// Per-particle arithmetic of the halftone stage shared by the CPU and CUDA
// backends (SP_HD): the counter-based random numbers, the Kaiser-Bessel
// window of the NFFT, the near-field correction of the regularized kernel,
// the bilinear force sampling and the disc coverage. See README.md.
#include <cmath>
#include <cstdint>

#include "pipeline/hd.h"

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

enum RngStream : uint32_t { kStreamInit = 1, kStreamShake = 2, kStreamKeep = 3, kStreamAdd = 4 };

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

// Anti-aliased disc coverage of a pixel centre at distance dist from the dot
// centre: a one-pixel linear ramp across the rim.
SP_HD float disc_coverage(float dist, float radius) { return fminf(fmaxf(radius - dist + 0.5f, 0.f), 1.f); }

// Clamp a particle into the image domain [0, w) x [0, h).
SP_HD float clamp_coord(float v, int size) { return fminf(fmaxf(v, 0.f), float(size) - 1e-3f); }

}  // namespace sp::halftone
