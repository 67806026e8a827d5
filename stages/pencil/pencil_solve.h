#pragma once
// Lu's beta (eq. 9): argmin ||beta ln H - ln J||^2 + lambda ||grad beta||^2,
// i.e. (diag(ln^2 H) + lambda L) beta = ln H ln J with L the 4-neighbour
// Laplacian (Neumann borders), solved by Jacobi-preconditioned conjugate
// gradients. Both backends run the same iteration: p is double-buffered and
// rebuilt on the fly (p = z + beta_k p_old) where the stencil needs it, so one
// iteration is two passes with one reduction each.
#include <cstdint>

#include "stages/pencil/pencil.h"

namespace sp::pencil {

struct BetaSystem {
  int width = 0, height = 0;
  const uint8_t* luma = nullptr;          // per pixel
  const float* ln_j_by_luma = nullptr;    // 256
  const uint8_t* texels = nullptr;
  int tex_width = 0, tex_height = 0;
  const float* ln_h_table = nullptr;      // 256
  float lambda = 0.2f;
};

struct CgVectors {
  float* x = nullptr;  // beta; read as the warm start
  float* r = nullptr;
  float* p[2] = {nullptr, nullptr};
  float* q = nullptr;
};

// Fixed-size row blocks give the reductions a fixed order, whatever the thread count.
constexpr int kSolveRowsPerBlock = 8;

// Runs to ||r|| <= tolerance ||b|| or max_iterations. `warm`: start from x, else from 0.
// `partials` holds 2 * ceil(height / kSolveRowsPerBlock) doubles.
SolveStats solve_beta_cpu(const BetaSystem& s, CgVectors& v, double* partials, bool warm, double tolerance,
                          int max_iterations);

}  // namespace sp::pencil
