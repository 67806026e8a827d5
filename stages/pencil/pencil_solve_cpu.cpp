#include <algorithm>
#include <cmath>

#include "pipeline/parallel.h"
#include "stages/pencil/pencil_math.h"
#include "stages/pencil/pencil_solve.h"

namespace sp::pencil {

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

// (A v)(x, y) for a field given as a function of the pixel index.
template <class Field>
float apply_system(const BetaSystem& s, const PixelTerms& t, int x, int y, Field&& v) {
  const size_t i = size_t(y) * s.width + x;
  const float c = v(i, x, y);
  float neighbours = 0;
  if (x > 0) neighbours += v(i - 1, x - 1, y);
  if (x + 1 < s.width) neighbours += v(i + 1, x + 1, y);
  if (y > 0) neighbours += v(i - s.width, x, y - 1);
  if (y + 1 < s.height) neighbours += v(i + s.width, x, y + 1);
  return t.ln_h * t.ln_h * c + s.lambda * (float(t.neighbours) * c - neighbours);
}

template <class Fn>
void for_row_blocks(int height, Fn&& fn) {
  const int blocks = (height + kSolveRowsPerBlock - 1) / kSolveRowsPerBlock;
  parallel_for(blocks, [&](int b0, int b1) {
    for (int b = b0; b < b1; ++b)
      fn(b, b * kSolveRowsPerBlock, std::min(height, (b + 1) * kSolveRowsPerBlock));
  });
}

double sum_partials(const double* partials, int blocks, int stride, int which) {
  double sum = 0;
  for (int b = 0; b < blocks; ++b) sum += partials[size_t(b) * stride + which];
  return sum;
}

}  // namespace

SolveStats solve_beta_cpu(const BetaSystem& s, CgVectors& v, double* partials, bool warm, double tolerance,
                          int max_iterations) {
  const int w = s.width, blocks = (s.height + kSolveRowsPerBlock - 1) / kSolveRowsPerBlock;
  // r = b - A x0, partials: b.b, r.z, r.r.
  double init[3] = {0, 0, 0};
  // Two slots per block: b.b and r.z first, then r.r in a second pass.
  if (!warm) {
    parallel_for(s.height, [&](int y0, int y1) {
      std::fill(v.x + size_t(y0) * w, v.x + size_t(y1) * w, 0.f);
    });
  }
  for_row_blocks(s.height, [&](int b, int y0, int y1) {
    double bb = 0, rz = 0;
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        const size_t i = size_t(y) * w + x;
        const PixelTerms t = terms(s, x, y);
        const float rhs = t.ln_h * s.ln_j_by_luma[s.luma[i]];
        const float ax = apply_system(s, t, x, y, [&](size_t j, int, int) { return v.x[j]; });
        const float r = rhs - ax;
        v.r[i] = r;
        bb += double(rhs) * rhs;
        rz += double(r) * r / t.diagonal;
      }
    }
    partials[2 * size_t(b)] = bb;
    partials[2 * size_t(b) + 1] = rz;
  });
  init[0] = sum_partials(partials, blocks, 2, 0);
  init[1] = sum_partials(partials, blocks, 2, 1);
  for_row_blocks(s.height, [&](int b, int y0, int y1) {
    double rr = 0;
    for (size_t i = size_t(y0) * w; i < size_t(y1) * w; ++i) rr += double(v.r[i]) * v.r[i];
    partials[2 * size_t(b)] = rr;
  });
  init[2] = sum_partials(partials, blocks, 2, 0);

  SolveStats stats;
  const double bb = init[0];
  if (bb <= 0) {
    parallel_for(s.height, [&](int y0, int y1) { std::fill(v.x + size_t(y0) * w, v.x + size_t(y1) * w, 0.f); });
    return stats;
  }
  const double target = tolerance * tolerance * bb;
  double rz = init[1], rr = init[2], rz_prev = 1;
  for (int k = 0; k < max_iterations && rr > target; ++k) {
    const float beta_k = k == 0 ? 0.f : float(rz / rz_prev);
    float* p_new = v.p[k & 1];
    const float* p_old = v.p[(k + 1) & 1];
    // p = z + beta_k p_old, recomputed at the neighbours so no pass is needed in between.
    auto direction = [&](size_t j, int x, int y) {
      const float z = v.r[j] / terms(s, x, y).diagonal;
      return k == 0 ? z : z + beta_k * p_old[j];
    };
    for_row_blocks(s.height, [&](int b, int y0, int y1) {
      double pq = 0;
      for (int y = y0; y < y1; ++y) {
        for (int x = 0; x < w; ++x) {
          const size_t i = size_t(y) * w + x;
          const PixelTerms t = terms(s, x, y);
          const float p = direction(i, x, y);
          const float q = apply_system(s, t, x, y, direction);
          p_new[i] = p;
          v.q[i] = q;
          pq += double(p) * q;
        }
      }
      partials[2 * size_t(b)] = pq;
    });
    const double pq = sum_partials(partials, blocks, 2, 0);
    if (!(pq > 0)) break;  // breakdown: A is SPD, so only from round-off at convergence
    const float alpha = float(rz / pq);
    for_row_blocks(s.height, [&](int b, int y0, int y1) {
      double rz_new = 0, rr_new = 0;
      for (int y = y0; y < y1; ++y) {
        for (int x = 0; x < w; ++x) {
          const size_t i = size_t(y) * w + x;
          v.x[i] += alpha * p_new[i];
          const float r = v.r[i] - alpha * v.q[i];
          v.r[i] = r;
          rz_new += double(r) * r / terms(s, x, y).diagonal;
          rr_new += double(r) * r;
        }
      }
      partials[2 * size_t(b)] = rz_new;
      partials[2 * size_t(b) + 1] = rr_new;
    });
    rz_prev = rz;
    rz = sum_partials(partials, blocks, 2, 0);
    rr = sum_partials(partials, blocks, 2, 1);
    stats.iterations = k + 1;
  }
  stats.relative_residual = float(std::sqrt(rr / bb));
  return stats;
}

}  // namespace sp::pencil
