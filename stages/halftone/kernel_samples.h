#pragma once
// The samples and the post-processing of the two kernel spectra the stage
// needs at configure: the fast summation's regularized kernel gradient (its
// Fourier coefficients b_j, double precision) and the attraction's kernel G
// (the padded grid's half spectra, float). SP_HD, so the CPU backend (FFTW,
// fastsum_plan.cpp / attraction_cpu.cpp) and the CUDA backend (cuFFT,
// kernel_spectra.cu) transform the very same samples in the same layout, and
// the host result is the device's oracle in the tests.
#include <cmath>
#include <cstddef>

#include "pipeline/hd.h"
#include "stages/halftone/float2.h"
#include "stages/halftone/halftone_math.h"

namespace sp::halftone {

// K_R'(r) / r of the regularized kernel K_R (README.md, "fast summation"), in
// torus units: the even Taylor polynomial in q = r / eps_I inside eps_I,
// log r in between, and the degree 2p - 1 boundary polynomial in
// t = (r - (1/2 - eps_B)) / eps_B that flattens it to zero at r = 1/2.
// Plain arrays, so a kernel can take it by value.
struct RegularizedKernel {
  double eps_i = 0, eps_b = 0;
  int inner_terms = 0;  // a_j, j < inner_terms (= p)
  double inner[kMaxTaylor] = {};
  int boundary_terms = 0;  // c_e, e < boundary_terms (= 2p)
  double boundary[2 * kMaxTaylor] = {};

  SP_HD double gradient_over_r(double r) const {
    if (r < eps_i) {
      const double q2 = (r / eps_i) * (r / eps_i);
      double s = 0, qp = 1;
      for (int j = 1; j < inner_terms; ++j, qp *= q2) s += 2.0 * j * inner[j] * qp;
      return s / (eps_i * eps_i);
    }
    if (r <= 0.5 - eps_b) return 1.0 / (r * r);
    if (r >= 0.5) return 0.0;
    const double t = (r - (0.5 - eps_b)) / eps_b;
    double dp = 0;  // d/dt of the boundary polynomial, Horner
    for (int e = boundary_terms - 1; e >= 1; --e) dp = dp * t + e * boundary[e];
    return dp / eps_b / r;
  }
};

// Storage index s in [0, N) of a centred index k in [-N/2, N/2): s = (k + N) % N.
SP_HD int centred_index(int s, int N) { return s < N / 2 ? s : s - N; }

// grad K_R at the torus grid point k / N, k = (centred_index(s1), centred_index(s2)),
// x + i y: the sample the FFT stores at s2 * N + s1.
SP_HD void regularized_gradient_sample(const RegularizedKernel& kernel, int N, int s1, int s2, double& gx,
                                       double& gy) {
  const double x = double(centred_index(s1, N)) / N, y = double(centred_index(s2, N)) / N;
  const double g = kernel.gradient_over_r(hypot(x, y));
  gx = g * x;
  gy = g * y;
}

// b_j for |j1|, |j2| < N/2 from the samples' forward FFT (interleaved complex
// double, N x N, row j2): normalized by N^2 and rounded once to float. The
// Nyquist row and column (j = -N/2) are zero: the band |j| < N/2 omits them.
SP_HD float2 kernel_coefficient(const double* hat, int N, int j1, int j2) {
  if (j1 == -N / 2 || j2 == -N / 2) return make_float2(0.f, 0.f);
  const double norm = 1.0 / (double(N) * N);
  const double* b = hat + 2 * (size_t((j2 + N) % N) * N + (j1 + N) % N);
  return make_float2(float(b[0] * norm), float(b[1] * norm));
}

// -G(d) / (pw ph), G(d) = d / |d|^2, at padded grid point (px, py): d = (dx,
// dy) with |dx| < w, |dy| < h stored at ((dy + ph) % ph, (dx + pw) % pw), so
// the convolution is linear (pw >= 2w, ph >= 2h); zero elsewhere and at d = 0.
// Double precision, rounded once.
SP_HD void attraction_kernel_sample(int px, int py, int w, int h, int pw, int ph, float& gx, float& gy) {
  const int dx = px < w ? px : (px > pw - w ? px - pw : 0);
  const int dy = py < h ? py : (py > ph - h ? py - ph : 0);
  const bool outside = (px >= w && px <= pw - w) || (py >= h && py <= ph - h);
  if (outside || (dx == 0 && dy == 0)) {
    gx = gy = 0.f;
    return;
  }
  const double scale = -1.0 / ((double(pw) * ph) * (double(dx) * dx + double(dy) * dy));
  gx = float(scale * dx);
  gy = float(scale * dy);
}

// Row ky <= ph/2, column kx of imaginary_kernel_rows (attraction.h) from the
// half spectra of -G_x and -G_y (interleaved complex float, ph x (pw/2+1)):
// the imaginary parts averaged with the mirror row ph - ky (kx even, ky odd).
SP_HD float2 imaginary_kernel_row_entry(const float* kx_hat, const float* ky_hat, int pw, int ph, int ky, int kx) {
  const int columns = pw / 2 + 1, mirror = (ph - ky) % ph;
  const size_t i = 2 * (size_t(ky) * columns + kx) + 1, m = 2 * (size_t(mirror) * columns + kx) + 1;
  return make_float2(0.5f * (kx_hat[i] + kx_hat[m]), 0.5f * (ky_hat[i] - ky_hat[m]));
}

}  // namespace sp::halftone
