#pragma once
// Test oracle: Lu's pencil drawing written plainly in float64 from the
// paper's definitions (direct 2D convolutions with the rotated kernels, sorted
// medians, a direct CG in double). Shares no code path with the stage except
// the real-valued kernel formula and the texture, which are tested on their own.
#include <algorithm>
#include <cmath>
#include <vector>

#include "stages/pencil/pencil.h"
#include "tests/support/test_support.h"

namespace sp::pencil::reference {

struct Stroke {
  std::vector<int> gradient, classes;
  std::vector<double> sp;
};

inline int luma(const uint8_t* p) { return (77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8; }

inline std::vector<int> luma_plane(const test::HostImage& in) {
  std::vector<int> y(size_t(in.width) * in.height);
  for (size_t i = 0; i < y.size(); ++i) y[i] = luma(&in.pixels[4 * i]);
  return y;
}

inline std::vector<double> quantized_kernel(int d, int half, int width) {
  std::vector<double> k(size_t(2 * half + 1) * (2 * half + 1));
  for (int dy = -half; dy <= half; ++dy)
    for (int dx = -half; dx <= half; ++dx)
      k[size_t(dy + half) * (2 * half + 1) + dx + half] =
          double(std::lround(line_kernel_weight(d, dx, dy, half, width) * 255));
  return k;
}

// conv2(src, kernel, 'same') with zero padding.
inline std::vector<double> convolve(const std::vector<double>& src, int w, int h, const std::vector<double>& k, int half) {
  std::vector<double> out(src.size(), 0.0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double s = 0;
      for (int dy = -half; dy <= half; ++dy) {
        const int sy = y + dy;
        if (sy < 0 || sy >= h) continue;
        for (int dx = -half; dx <= half; ++dx) {
          const int sx = x + dx;
          if (sx < 0 || sx >= w) continue;
          s += k[size_t(dy + half) * (2 * half + 1) + dx + half] * src[size_t(sy) * w + sx];
        }
      }
      out[size_t(y) * w + x] = s;
    }
  return out;
}

inline Stroke stroke(const std::vector<int>& y, int w, int h, GradientForm form, int half, int width) {
  auto at = [&](int xx, int yy) { return y[size_t(std::clamp(yy, 0, h - 1)) * w + std::clamp(xx, 0, w - 1)]; };
  std::vector<int> med(y.size());
  for (int yy = 0; yy < h; ++yy)
    for (int xx = 0; xx < w; ++xx) {
      int n[9], c = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) n[c++] = at(xx + dx, yy + dy);
      std::sort(n, n + 9);
      med[size_t(yy) * w + xx] = n[4];
    }
  Stroke s;
  s.gradient.resize(y.size());
  std::vector<double> g(y.size());
  for (int yy = 0; yy < h; ++yy)
    for (int xx = 0; xx < w; ++xx) {
      const int c = med[size_t(yy) * w + xx];
      const int dx = xx + 1 < w ? c - med[size_t(yy) * w + xx + 1] : 0;
      const int dy = yy + 1 < h ? c - med[size_t(yy + 1) * w + xx] : 0;
      const int v = form == GradientForm::l1 ? (std::abs(dx) + std::abs(dy) + 1) / 2
                                             : int(std::lround(std::sqrt(0.5 * (dx * dx + dy * dy))));
      s.gradient[size_t(yy) * w + xx] = v;
      g[size_t(yy) * w + xx] = v;
    }
  std::vector<std::vector<double>> responses;
  for (int d = 0; d < kDirections; ++d) responses.push_back(convolve(g, w, h, quantized_kernel(d, half, 0), half));
  s.classes.assign(y.size(), 0);
  for (size_t i = 0; i < y.size(); ++i)
    for (int d = 1; d < kDirections; ++d)
      if (responses[d][i] > responses[s.classes[i]][i]) s.classes[i] = d;
  s.sp.assign(y.size(), 0.0);
  for (int d = 0; d < kDirections; ++d) {
    std::vector<double> c(y.size());
    for (size_t i = 0; i < c.size(); ++i) c[i] = s.classes[i] == d ? g[i] : 0.0;
    const std::vector<double> drawn = convolve(c, w, h, quantized_kernel(d, half, width), half);
    for (size_t i = 0; i < c.size(); ++i) s.sp[i] += drawn[i];
  }
  return s;
}

// Matched tone level per source luma: smallest t with target CDF >= source CDF.
inline std::vector<int> tone_levels(const std::vector<int>& y, const std::array<double, 3>& weights) {
  std::vector<double> pdf(256), tcdf(256);
  double z = 0;
  for (int v = 0; v < 256; ++v) {
    pdf[v] = weights[0] * std::exp(-(255.0 - v) / 9.0) / 9.0 + weights[1] * ((v >= 105 && v <= 225) ? 1 / 120.0 : 0) +
             weights[2] * std::exp(-(v - 90.0) * (v - 90.0) / 242.0) / (std::sqrt(2 * M_PI) * 11);
    z += pdf[v];
  }
  double acc = 0;
  for (int v = 0; v < 256; ++v) tcdf[v] = (acc += pdf[v] / z);
  tcdf[255] = 1;
  std::vector<double> counts(256, 0.0);
  for (int v : y) counts[v] += 1;
  std::vector<int> level(256);
  double below = 0;
  for (int g = 0; g < 256; ++g) {
    below += counts[g];
    const double c = below / double(y.size());
    int t = 0;
    while (t < 255 && tcdf[t] < c - 1e-13) ++t;
    level[g] = t;
  }
  return level;
}

inline double ln_h(const PencilTexture& t, int x, int y) {
  const int v = std::clamp<int>(t.texels[size_t(y % t.height) * t.width + (x % t.width)], 1, 254);
  return std::log(v / 255.0);
}

// out = (diag(ln^2 H) + lambda L) v, Neumann borders, in double.
inline void apply_beta_system(const std::vector<double>& lh, int w, int h, double lambda, const std::vector<double>& v,
                              std::vector<double>& out) {
  for (int yy = 0; yy < h; ++yy)
    for (int xx = 0; xx < w; ++xx) {
      const size_t i = size_t(yy) * w + xx;
      double s = lh[i] * lh[i] * v[i];
      if (xx > 0) s += lambda * (v[i] - v[i - 1]);
      if (xx + 1 < w) s += lambda * (v[i] - v[i + 1]);
      if (yy > 0) s += lambda * (v[i] - v[i - w]);
      if (yy + 1 < h) s += lambda * (v[i] - v[i + w]);
      out[i] = s;
    }
}

// (diag(ln^2 H) + lambda L) beta = ln H ln J in double by plain CG to 1e-12.
inline std::vector<double> solve_beta(const std::vector<double>& ln_j, const PencilTexture& t, int w, int h, double lambda) {
  const size_t n = ln_j.size();
  std::vector<double> lh(n), b(n), x(n, 0.0), r(n), p(n), q(n);
  for (int yy = 0; yy < h; ++yy)
    for (int xx = 0; xx < w; ++xx) lh[size_t(yy) * w + xx] = ln_h(t, xx, yy);
  auto apply = [&](const std::vector<double>& v, std::vector<double>& out) { apply_beta_system(lh, w, h, lambda, v, out); };
  double bb = 0;
  for (size_t i = 0; i < n; ++i) bb += (b[i] = lh[i] * ln_j[i]) * b[i];
  r = b;
  p = r;
  double rr = bb;
  for (int k = 0; k < 20000 && rr > 1e-24 * bb; ++k) {
    apply(p, q);
    double pq = 0;
    for (size_t i = 0; i < n; ++i) pq += p[i] * q[i];
    const double alpha = rr / pq;
    double rr_new = 0;
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr_new += r[i] * r[i];
    }
    for (size_t i = 0; i < n; ++i) p[i] = r[i] + rr_new / rr * p[i];
    rr = rr_new;
  }
  return x;
}

// Plain Jacobi-preconditioned CG (the solver before v3) in double, from x (warm
// start), to ||b - A x|| <= tolerance ||b||: its iteration count is what the
// Chebyshev-preconditioned solve must beat.
inline int jacobi_pcg_iterations(const std::vector<double>& ln_j, const PencilTexture& t, int w, int h,
                                 double lambda, std::vector<double> x, double tolerance, int max_iterations) {
  const size_t n = ln_j.size();
  std::vector<double> lh(n), diag(n), r(n), z(n), p(n), q(n);
  for (int yy = 0; yy < h; ++yy)
    for (int xx = 0; xx < w; ++xx) {
      const size_t i = size_t(yy) * w + xx;
      lh[i] = ln_h(t, xx, yy);
      diag[i] = lh[i] * lh[i] + lambda * ((xx > 0) + (xx + 1 < w) + (yy > 0) + (yy + 1 < h));
    }
  auto apply = [&](const std::vector<double>& v, std::vector<double>& out) { apply_beta_system(lh, w, h, lambda, v, out); };
  apply(x, q);
  double bb = 0, rr = 0, rz = 0;
  for (size_t i = 0; i < n; ++i) {
    const double b = lh[i] * ln_j[i];
    bb += b * b;
    r[i] = b - q[i];
    rr += r[i] * r[i];
    z[i] = r[i] / diag[i];
    rz += r[i] * z[i];
  }
  p = z;
  int k = 0;
  for (; k < max_iterations && rr > tolerance * tolerance * bb; ++k) {
    apply(p, q);
    double pq = 0;
    for (size_t i = 0; i < n; ++i) pq += p[i] * q[i];
    const double alpha = rz / pq;
    double rz_new = 0;
    rr = 0;
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr += r[i] * r[i];
      z[i] = r[i] / diag[i];
      rz_new += r[i] * z[i];
    }
    for (size_t i = 0; i < n; ++i) p[i] = z[i] + rz_new / rz * p[i];
    rz = rz_new;
  }
  return k;
}

inline test::HostImage pencil(const test::HostImage& in, const PencilParams& p, const PencilTexture& fitted) {
  const int w = in.width, h = in.height;
  const std::vector<int> y = luma_plane(in);
  const int half = resolve_line_length(p.line_length, {w, h}) / 2;
  const Stroke s = stroke(y, w, h, p.gradient, half, p.line_width);
  const double lo = *std::min_element(s.sp.begin(), s.sp.end()), hi = *std::max_element(s.sp.begin(), s.sp.end());
  const std::vector<int> level = tone_levels(y, p.tone_weights);
  std::vector<double> ln_j(y.size());
  for (size_t i = 0; i < y.size(); ++i) ln_j[i] = std::log(std::max(level[y[i]], 0) == 0 ? 0.5 / 255 : level[y[i]] / 255.0);
  double m1 = 0, m2 = 0;
  for (uint8_t v : fitted.texels) {
    const double l = std::log(std::clamp<int>(v, 1, 254) / 255.0);
    m1 += l;
    m2 += l * l;
  }
  std::vector<double> beta(y.size());
  if (p.tone_solve == ToneSolve::lu2012) beta = solve_beta(ln_j, fitted, w, h, p.lambda);
  else
    for (size_t i = 0; i < y.size(); ++i) beta[i] = ln_j[i] * m1 / m2;
  test::HostImage out(w, h);
  for (int yy = 0; yy < h; ++yy)
    for (int xx = 0; xx < w; ++xx) {
      const size_t i = size_t(yy) * w + xx;
      const double stroke_v = std::pow(1 - (hi > lo ? (s.sp[i] - lo) / (hi - lo) : 0.0), p.gamma_s);
      const double tone_v = std::exp(p.gamma_i * beta[i] * ln_h(fitted, xx, yy));
      const double y_new = stroke_v * tone_v * 255;
      const uint8_t* src = &in.pixels[4 * i];
      uint8_t* dst = &out.pixels[4 * i];
      const double delta = p.color ? y_new - (77 * src[0] + 150 * src[1] + 29 * src[2]) / 256.0 : 0;
      for (int c = 0; c < 3; ++c)
        dst[c] = uint8_t(std::clamp(std::floor((p.color ? src[c] + delta : y_new) + 0.5), 0.0, 255.0));
      dst[3] = src[3];
    }
  return out;
}

}  // namespace sp::pencil::reference
