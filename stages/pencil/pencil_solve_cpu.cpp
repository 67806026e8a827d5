// Chronopoulos-Gear CG with the Chebyshev preconditioner on the CPU: the same
// per-pixel arithmetic as pencil_solve.cu, in whole-frame passes.
#include <algorithm>
#include <cmath>

#include "pipeline/parallel.h"
#include "stages/pencil/pencil_math.h"
#include "stages/pencil/pencil_solve.h"

namespace sp::pencil {

ChebyshevCoefficients chebyshev_coefficients() {
  // Saad, Iterative Methods, Alg. 12.1 (Chebyshev acceleration) on [low, 2],
  // started from u = 0: a fixed polynomial in D^-1 A applied to D^-1 r.
  const double low = kChebyshevLow, high = 2.0;
  const double theta = (high + low) / 2, delta = (high - low) / 2, sigma = theta / delta;
  ChebyshevCoefficients c;
  c.first = float(1 / theta);
  double rho_prev = 1 / sigma;
  for (int j = 1; j < kChebyshevSteps; ++j) {
    const double rho = 1 / (2 * sigma - rho_prev);
    c.keep[j] = float(rho * rho_prev);
    c.push[j] = float(2 * rho / delta);
    rho_prev = rho;
  }
  return c;
}

namespace {

struct PixelTerms {
  float ln_h;
  float diagonal;
  int neighbours;
};

PixelTerms terms(const BetaSystem& s, int x, int y) {
  PixelTerms t;
  t.ln_h = s.ln_h_table[s.texels[texture_index(x, y, s.tex_width, s.tex_height)]];
  t.neighbours = neighbour_count(x, y, s.width, s.height);
  t.diagonal = system_diagonal(t.ln_h, t.neighbours, s.lambda);
  return t;
}

// (A v)(x, y); the same order of operations as the CUDA kernel.
float apply_system(const BetaSystem& s, const PixelTerms& t, int x, int y, const float* v) {
  const size_t i = size_t(y) * s.width + x;
  const float c = v[i];
  float neighbours = 0;
  if (x > 0) neighbours += v[i - 1];
  if (x + 1 < s.width) neighbours += v[i + 1];
  if (y > 0) neighbours += v[i - s.width];
  if (y + 1 < s.height) neighbours += v[i + s.width];
  return t.ln_h * t.ln_h * c + s.lambda * (float(t.neighbours) * c - neighbours);
}

// fn(b, y0, y1) over fixed row blocks; each block's sums land in partials[b * kSolveSums + k].
template <class Fn>
void for_row_blocks(int height, Fn&& fn) {
  const int blocks = (height + kSolveRowsPerBlock - 1) / kSolveRowsPerBlock;
  parallel_for(blocks, [&](int b0, int b1) {
    for (int b = b0; b < b1; ++b)
      fn(b, b * kSolveRowsPerBlock, std::min(height, (b + 1) * kSolveRowsPerBlock));
  });
}

template <class Fn>
void for_pixels(const BetaSystem& s, Fn&& fn) {
  parallel_for(s.height, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < s.width; ++x) fn(size_t(y) * s.width + x, x, y);
  });
}

void total(const double* partials, int height, double (&out)[kSolveSums]) {
  const int blocks = (height + kSolveRowsPerBlock - 1) / kSolveRowsPerBlock;
  for (int k = 0; k < kSolveSums; ++k) {
    out[k] = 0;
    for (int b = 0; b < blocks; ++b) out[k] += partials[size_t(b) * kSolveSums + k];
  }
}

void chebyshev_cpu(const BetaSystem& s, CgVectors& v, const ChebyshevCoefficients& c) {
  float* u_prev = v.chebyshev[0];
  float* d = v.chebyshev[1];
  // Step j writes u_{j+1}; the last step writes v.u. Ping-pong so a step reads
  // the previous u at the neighbours while it writes the next.
  float* targets[2] = {kChebyshevSteps % 2 == 1 ? v.u : u_prev, kChebyshevSteps % 2 == 1 ? u_prev : v.u};
  for_pixels(s, [&](size_t i, int x, int y) {
    const ChebyshevState st = chebyshev_first(v.r[i], terms(s, x, y).diagonal, c.first);
    targets[0][i] = st.u;
    d[i] = st.d;
  });
  for (int j = 1; j < kChebyshevSteps; ++j) {
    const float* u_in = targets[(j - 1) & 1];
    float* u_out = targets[j & 1];
    for_pixels(s, [&](size_t i, int x, int y) {
      const PixelTerms t = terms(s, x, y);
      const ChebyshevState st =
          chebyshev_step({u_in[i], d[i]}, v.r[i], apply_system(s, t, x, y, u_in), t.diagonal, c.keep[j], c.push[j]);
      u_out[i] = st.u;
      d[i] = st.d;
    });
  }
}

// u = M r, then w = A u; returns (r, u), (w, u), (r, r).
void precondition(const BetaSystem& s, CgVectors& v, const ChebyshevCoefficients& c, double* partials,
                  double (&sums)[kSolveSums]) {
  chebyshev_cpu(s, v, c);
  for_row_blocks(s.height, [&](int b, int y0, int y1) {
    double ru = 0, wu = 0, rr = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < s.width; ++x) {
        const size_t i = size_t(y) * s.width + x;
        const float w = apply_system(s, terms(s, x, y), x, y, v.u);
        v.w[i] = w;
        ru += double(v.r[i]) * v.u[i];
        wu += double(w) * v.u[i];
        rr += double(v.r[i]) * v.r[i];
      }
    partials[size_t(b) * kSolveSums + 0] = ru;
    partials[size_t(b) * kSolveSums + 1] = wu;
    partials[size_t(b) * kSolveSums + 2] = rr;
  });
  total(partials, s.height, sums);
}

}  // namespace

void apply_preconditioner_cpu(const BetaSystem& s, CgVectors& v) { chebyshev_cpu(s, v, chebyshev_coefficients()); }

SolveStats solve_beta_cpu(const BetaSystem& s, CgVectors& v, double* partials, bool warm, double tolerance,
                          int max_iterations) {
  if (!warm) for_pixels(s, [&](size_t i, int, int) { v.x[i] = 0.f; });
  // r = b - A x0; partials: b.b.
  for_row_blocks(s.height, [&](int b, int y0, int y1) {
    double bb = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < s.width; ++x) {
        const size_t i = size_t(y) * s.width + x;
        const PixelTerms t = terms(s, x, y);
        const float rhs = t.ln_h * s.ln_j_by_luma[s.luma[i]];
        v.r[i] = rhs - apply_system(s, t, x, y, v.x);
        bb += double(rhs) * rhs;
      }
    partials[size_t(b) * kSolveSums] = bb;
    partials[size_t(b) * kSolveSums + 1] = partials[size_t(b) * kSolveSums + 2] = 0;
  });
  double sums[kSolveSums];
  total(partials, s.height, sums);
  const double bb = sums[0];
  SolveStats stats;
  if (bb <= 0) {
    for_pixels(s, [&](size_t i, int, int) { v.x[i] = 0.f; });
    return stats;
  }
  const ChebyshevCoefficients c = chebyshev_coefficients();
  precondition(s, v, c, partials, sums);
  const double target = tolerance * tolerance * bb;
  double rr = sums[2];
  CgScalars scalars;
  bool usable = rr > target && scalars.next(sums[0], sums[1], true);
  for (int k = 0; usable && k < max_iterations; ++k) {
    // p = u + beta p, s = w + beta s (= A p), x += alpha p, r -= alpha s.
    const float alpha = float(scalars.alpha), beta = float(scalars.beta);
    for_pixels(s, [&](size_t i, int, int) {
      const float p = k == 0 ? v.u[i] : v.u[i] + beta * v.p[i];
      const float ap = k == 0 ? v.w[i] : v.w[i] + beta * v.s[i];
      v.p[i] = p;
      v.s[i] = ap;
      v.x[i] += alpha * p;
      v.r[i] -= alpha * ap;
    });
    precondition(s, v, c, partials, sums);
    rr = sums[2];
    stats.iterations = k + 1;
    usable = rr > target && scalars.next(sums[0], sums[1], false);
  }
  stats.relative_residual = float(std::sqrt(rr / bb));
  return stats;
}

}  // namespace sp::pencil
