#pragma once
// NFFT-based fast summation of the repulsive forces
//   F_a = sum_{b != a} (p_a - p_b) / |p_a - p_b|^2   (the gradient of log r)
// after Teuber et al. (2011) and Gwosdek et al. (2011), see README.md. The
// plan (sizes, regularized kernel, window, near-field polynomial) is cheap
// and built on the host in double precision for both backends; the kernel's
// Fourier coefficients (an N x N FFT, the stage's start-up) are made where
// they are used: FastsumCpu with FFTW (host_kernel_hat), FastsumGpu with
// cuFFT (kernel_spectra.cu). FastsumCpu and the CUDA kernels in fastsum.cu
// run the per-iteration algorithm on them.
#include "stages/halftone/float2.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "stages/halftone/halftone_math.h"
#include "stages/halftone/kernel_samples.h"

namespace sp::halftone {

struct FastsumSettings {
  int m = 5;                    // window cut-off (grid points each side)
  int p = 5;                    // Taylor degree of the regularization
  double sigma = 1.25;          // oversampling n / N (the stage's default)
  double near_radius_px = 4.0;  // eps_I in pixels (sets N)
};

struct FastsumPlan {
  int width = 0, height = 0;  // particles live in [0, width) x [0, height) (pixels)
  int N = 0;                  // kernel bandwidth (even)
  int n = 0;                  // oversampled FFT grid side (even)
  double scale = 0;           // torus units per pixel
  double eps_i = 0, eps_b = 0;  // regularization widths (torus units)
  float grid_per_pixel = 0;     // scale * n
  Window window;
  NearKernel near;  // in pixel units
  RegularizedKernel regularized;  // torus units; its gradient's samples give b_j
  std::vector<float> deconv;  // 1 / c_j^2 (D applied twice), j in [-N/2, N/2)
  // Uniform cells of at least eps_I for the near field and the particle sort.
  int cells_x = 0, cells_y = 0;
  float cell_w = 0, cell_h = 0;

  int cells() const { return cells_x * cells_y; }
  size_t grid_points() const { return size_t(n) * n; }
};

// Sizes, window, kernels and deconvolution: N + O(p^3) work, no transform.
FastsumPlan make_fastsum_plan(int width, int height, const FastsumSettings& settings);

// b_j = coefficients of grad K_R, x + i y packed, j in [-N/2, N/2)^2, index
// (j2 + N/2) * N + (j1 + N/2); the Nyquist row and column are zero. N x N
// samples and a float64 N x N FFTW transform: 0.7 s at 1080p (N = 2828).
using KernelHat = std::vector<std::complex<float>>;
KernelHat host_kernel_hat(const FastsumPlan& plan);
// host_kernel_hat made once for concurrent and recent callers (recent_plans.h):
// the CPU backend's segment workers and colour channels share it.
std::shared_ptr<const KernelHat> shared_host_kernel_hat(const FastsumPlan& plan);
std::mutex& fftw_planner_mutex();
// FFTW's thread support, float and double, set up once; then planners may
// ask for worker_count() threads.
void init_fftw_threads();
// Smallest even n >= x whose prime factors are 2, 3, 5 (fast FFT sizes on both backends).
int nice_fft_size(double x);  // FFTW's planner is not thread-safe

// Double-precision pieces of the plan, exposed for the tests.
double kb_fourier(const FastsumPlan& plan, int k);  // c_k = I0(m sqrt(b^2 - (2 pi k/n)^2))
// Radial derivative of the regularized kernel K_R over r, in torus units (K_R'(r) / r).
double regularized_gradient_over_r(const FastsumPlan& plan, double r);

// Cell of a particle (pixel coordinates), row-major.
SP_HD int cell_of(float x, float y, int cells_x, int cells_y, float inv_cell_w, float inv_cell_h) {
  const int cx = imin(imax(int(x * inv_cell_w), 0), cells_x - 1);
  const int cy = imin(imax(int(y * inv_cell_h), 0), cells_y - 1);
  return cy * cells_x + cx;
}

// Float64 O(M^2) oracle of the repulsive forces.
void direct_forces(const float2* pos, int count, double* fx, double* fy);

// The CPU fast summation (FFTW, multithreaded). Owns its buffers.
class FastsumCpu {
 public:
  FastsumCpu(const FastsumPlan& plan, int capacity);
  ~FastsumCpu();
  FastsumCpu(const FastsumCpu&) = delete;
  FastsumCpu& operator=(const FastsumCpu&) = delete;

  // Stable counting sort of the particles by cell (in place), filling the
  // cell table the near field reads. Call before forces(). `carried`
  // (optional, count entries) is permuted as the particles are.
  void sort(float2* pos, int count, float2* carried = nullptr);
  // Repulsive forces (pixel units) of sorted particles: far + near field.
  void forces(const float2* pos, int count, float2* force);
  void far_field(const float2* pos, int count, float2* force);
  // The far field of the dots where the last far_field() spread them,
  // evaluated at `pos` (the spread and the FFTs are skipped).
  void far_field_of_last_spread(const float2* pos, int count, float2* force);
  void add_near_field(const float2* pos, int count, float2* force) const;

  const std::vector<int>& cell_start() const { return cell_start_; }

 private:
  void window_weights_at(const float2* pos, int count);
  void spread(const float2* pos, int count);
  void multiply();
  void interpolate(int count, float2* force) const;

  const FastsumPlan& plan_;
  std::shared_ptr<const KernelHat> kernel_hat_;
  int capacity_;
  std::vector<int> cell_start_, cell_key_;
  std::vector<float2> sorted_;
  std::vector<float> weights_;  // per particle: 2m x-weights, 2m y-weights
  std::vector<int> first_;      // per particle: first grid x, first grid y
  float* grid_ = nullptr;            // n x n real (spread)
  std::complex<float>* half_ = nullptr;  // n x (n/2+1) (R2C output)
  std::complex<float>* band_ = nullptr;  // n x n, non-zero in the band only
  std::complex<float>* field_ = nullptr;  // n x n (C2C output): Fx + i Fy
  void* r2c_ = nullptr;
  void* c2c_ = nullptr;
};

}  // namespace sp::halftone
