#pragma once
// Lu's beta (eq. 9): argmin ||beta ln H - ln J||^2 + lambda ||grad beta||^2,
// i.e. (diag(ln^2 H) + lambda L) beta = ln H ln J with L the 4-neighbour
// Laplacian (Neumann borders), solved by preconditioned conjugate gradients.
//
// v3 (session 16): Chronopoulos-Gear CG, so the three dot products of an
// iteration, (r, u), (w, u) = (A u, u) and (r, r), come from ONE reduction (one
// grid sync per iteration on CUDA instead of two), preconditioned by a fixed
// Chebyshev polynomial in D^-1 A (D the diagonal). The polynomial is a global
// operator, but degree k-1 only reaches k-1 pixels, so CUDA evaluates it in
// shared memory over a tile plus a halo: no extra pass or sync, and fewer
// iterations than Jacobi (k = 1). Both backends evaluate every pixel with the
// same SP_HD expressions below; only the reductions' order differs.
#include <cstdint>

#include <cstddef>

#include "pipeline/hd.h"
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

// Chebyshev steps of the preconditioner: u = p(D^-1 A) D^-1 r with p of degree
// kChebyshevSteps - 1 (1 would be Jacobi). The spectrum of D^-1 A lies in (0, 2)
// (A is diagonally dominant with a positive diagonal), so the polynomial is set
// on [kChebyshevLow, 2]; its residual polynomial 1 - t p(t) stays in (-1, 1) on
// all of (0, 2], so t p(t) > 0 there and the preconditioner is SPD.
constexpr int kChebyshevSteps = 3;
constexpr double kChebyshevLow = 0.06;

struct ChebyshevCoefficients {
  float first = 1;                           // u_1 = first * r / diag
  float keep[kChebyshevSteps] = {};          // d_j = keep[j] d_{j-1} + push[j] (r - A u_j) / diag
  float push[kChebyshevSteps] = {};
};
ChebyshevCoefficients chebyshev_coefficients();

// Per-pixel steps, shared by both backends so the arithmetic is the same.
struct ChebyshevState {
  float u, d;
};
SP_HD ChebyshevState chebyshev_first(float r, float diagonal, float first) {
  const float d = first * (r / diagonal);
  return {d, d};
}
SP_HD ChebyshevState chebyshev_step(ChebyshevState s, float r, float a_u, float diagonal, float keep,
                                           float push) {
  const float d = keep * s.d + push * ((r - a_u) / diagonal);
  return {s.u + d, d};
}

// The vectors of one solve (CPU). x is read as the warm start.
struct CgVectors {
  float* x = nullptr;
  float* r = nullptr;
  float* u = nullptr;  // preconditioned residual
  float* w = nullptr;  // A u
  float* p = nullptr;
  float* s = nullptr;  // A p, by recurrence
  float* chebyshev[2] = {nullptr, nullptr};  // u of the previous step, d
};

// Fixed-size row blocks give the reductions a fixed order, whatever the thread count.
constexpr int kSolveRowsPerBlock = 8;
constexpr int kSolveSums = 3;
inline size_t solve_partials_count(int height) {
  return size_t(kSolveSums) * ((height + kSolveRowsPerBlock - 1) / kSolveRowsPerBlock);
}

// u = M r (the Chebyshev polynomial) on the whole frame; uses v.r, writes v.u
// and v.chebyshev. Exposed for the tests (M must be SPD).
void apply_preconditioner_cpu(const BetaSystem& s, CgVectors& v);

// Runs to ||r|| <= tolerance ||b|| or max_iterations (r is the recurrence's
// residual, as in every CG). `warm`: start from x, else from 0.
// `partials` holds solve_partials_count(height) doubles.
SolveStats solve_beta_cpu(const BetaSystem& s, CgVectors& v, double* partials, bool warm, double tolerance,
                          int max_iterations);

// The scalars of Chronopoulos-Gear CG, updated from one reduction per iteration.
struct CgScalars {
  double rho = 0;     // (r, u)
  double alpha = 0;   // step along p
  double beta = 0;    // p = u + beta p
  // From the totals of the reduction after iteration k: (r, u), (A u, u). False
  // on breakdown (only from round-off at convergence: A and M are SPD).
  SP_HD bool next(double ru, double wu, bool first) {
    const double b = first ? 0.0 : ru / rho;
    const double denominator = first ? wu : wu - b * ru / alpha;
    if (!(ru > 0) || !(denominator > 0)) return false;
    beta = b;
    alpha = ru / denominator;
    rho = ru;
    return true;
  }
};

}  // namespace sp::pencil
