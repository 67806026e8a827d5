// Host-side set-up of the fast summation: sizes, the regularized kernel
// (two-point Taylor pieces near 0 and near the torus boundary), the window's
// Fourier transform, and for the CPU backend the kernel's Fourier
// coefficients (FFTW, double; the CUDA backend's are in kernel_spectra.cu).
#include <fftw3.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <new>
#include <tuple>

#include "pipeline/errors.h"
#include "pipeline/parallel.h"
#include "stages/halftone/fastsum.h"
#include "stages/halftone/recent_plans.h"

namespace sp::halftone {

std::mutex& fftw_planner_mutex() {
  static std::mutex m;  // FFTW's planner is not thread-safe
  return m;
}

void init_fftw_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    fftwf_init_threads();
    fftw_init_threads();
  });
}

int nice_fft_size(double x) {
  for (int n = std::max(8, int(std::ceil(x))); ; ++n) {
    if (n % 2) continue;
    int r = n;
    for (int f : {2, 3, 5})
      while (r % f == 0) r /= f;
    if (r == 1) return n;
  }
}

namespace {

// Solves a small dense system in place (partial pivoting).
std::vector<double> solve(std::vector<double> a, std::vector<double> b) {
  const int n = int(b.size());
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[piv * n + c])) piv = r;
    for (int k = 0; k < n; ++k) std::swap(a[c * n + k], a[piv * n + k]);
    std::swap(b[c], b[piv]);
    for (int r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (int k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (int r = n - 1; r >= 0; --r) {
    double s = b[r];
    for (int k = r + 1; k < n; ++k) s -= a[r * n + k] * x[k];
    x[r] = s / a[r * n + r];
  }
  return x;
}

// i-th derivative of t^e at t.
double monomial_derivative(int e, int i, double t) {
  if (i > e) return 0;
  double c = 1;
  for (int k = 0; k < i; ++k) c *= e - k;
  return c * std::pow(t, e - i);
}

// i-th derivative of log at r (i >= 1).
double log_derivative(int i, double r) {
  double f = 1;
  for (int k = 1; k < i; ++k) f *= k;
  return ((i - 1) % 2 ? -f : f) / std::pow(r, i);
}

// Even polynomial P(q) = sum_j a_j q^(2j), j < p, with P^(i)(1) = log^(i)(1), i < p.
std::vector<double> inner_taylor(int p) {
  std::vector<double> a(size_t(p) * p), rhs(p);
  for (int i = 0; i < p; ++i) {
    for (int j = 0; j < p; ++j) a[i * p + j] = monomial_derivative(2 * j, i, 1.0);
    rhs[i] = i == 0 ? 0.0 : log_derivative(i, 1.0);
  }
  return solve(a, rhs);
}

// Degree 2p-1 polynomial in t = (r - r0) / eps_b matching log's derivatives
// (i < p) at r0 and the value log(1/2) with zero derivatives at r = 1/2.
std::vector<double> boundary_taylor(int p, double r0, double eps_b) {
  const int d = 2 * p;
  std::vector<double> a(size_t(d) * d), rhs(d);
  for (int i = 0; i < p; ++i) {
    for (int e = 0; e < d; ++e) {
      a[i * d + e] = monomial_derivative(e, i, 0.0);
      a[(p + i) * d + e] = monomial_derivative(e, i, 1.0);
    }
    rhs[i] = i == 0 ? std::log(r0) : log_derivative(i, r0) * std::pow(eps_b, i);
    rhs[p + i] = i == 0 ? std::log(0.5) : 0.0;
  }
  return solve(a, rhs);
}

RegularizedKernel regularized_kernel(double eps_i, double eps_b, int p) {
  RegularizedKernel k;
  k.eps_i = eps_i;
  k.eps_b = eps_b;
  const std::vector<double> inner = inner_taylor(p), boundary = boundary_taylor(p, 0.5 - eps_b, eps_b);
  k.inner_terms = int(inner.size());
  std::copy(inner.begin(), inner.end(), k.inner);
  k.boundary_terms = int(boundary.size());
  std::copy(boundary.begin(), boundary.end(), k.boundary);
  return k;
}

}  // namespace

double kb_fourier(const FastsumPlan& plan, int k) {
  const double b = plan.window.b, m = plan.window.m, w = 2 * M_PI * k / plan.n;
  const double peak = std::sinh(b * m) / (M_PI * m);
  return std::cyl_bessel_i(0.0, m * std::sqrt(b * b - w * w)) / peak;
}

double regularized_gradient_over_r(const FastsumPlan& plan, double r) { return plan.regularized.gradient_over_r(r); }

KernelHat host_kernel_hat(const FastsumPlan& plan) {
  const int N = plan.N;
  // N^2 samples and an N^2 float64 FFT: at 1080p (N = 2828) the CPU
  // backend's start-up, so both use every core.
  // Not zeroed: every entry is written, samples by the threads below (which
  // also spreads the first touch of 2 x 128 MB over them), hat by the FFT.
  using Buffer = std::unique_ptr<std::complex<double>[], decltype(&fftw_free)>;
  const auto buffer = [&] {
    auto* p = static_cast<std::complex<double>*>(fftw_malloc(sizeof(fftw_complex) * size_t(N) * N));
    if (!p) throw std::bad_alloc();
    return Buffer(p, fftw_free);
  };
  const Buffer samples = buffer(), hat = buffer();
  parallel_for(N, [&](int begin, int end) {
    for (int s2 = begin; s2 < end; ++s2)
      for (int s1 = 0; s1 < N; ++s1) {
        double gx = 0, gy = 0;
        regularized_gradient_sample(plan.regularized, N, s1, s2, gx, gy);
        samples[size_t(s2) * N + s1] = {gx, gy};
      }
  });
  init_fftw_threads();
  fftw_plan fwd = nullptr;
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    fftw_plan_with_nthreads(worker_count());
    fwd = fftw_plan_dft_2d(N, N, reinterpret_cast<fftw_complex*>(samples.get()),
                           reinterpret_cast<fftw_complex*>(hat.get()), FFTW_FORWARD, FFTW_ESTIMATE);
  }
  fftw_execute(fwd);  // thread-safe; only planning needs the lock
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    fftw_destroy_plan(fwd);
  }
  KernelHat out(size_t(N) * N);
  const auto* spectrum = reinterpret_cast<const double*>(hat.get());
  parallel_for(N, [&](int begin, int end) {
    for (int j2 = begin - N / 2; j2 < end - N / 2; ++j2)
      for (int j1 = -N / 2; j1 < N / 2; ++j1) {
        const float2 b = kernel_coefficient(spectrum, N, j1, j2);
        out[size_t(j2 + N / 2) * N + (j1 + N / 2)] = {b.x, b.y};
      }
  });
  return out;
}

std::shared_ptr<const KernelHat> shared_host_kernel_hat(const FastsumPlan& plan) {
  // b_j depends on N and the regularized kernel only (not on the frame size).
  using Key = std::tuple<int, double, double, int>;
  static RecentPlans<Key, KernelHat> recent(4);
  return recent.get({plan.N, plan.eps_i, plan.eps_b, plan.regularized.inner_terms},
                    [&] { return host_kernel_hat(plan); });
}

FastsumPlan make_fastsum_plan(int width, int height, const FastsumSettings& s) {
  if (s.m < 2 || s.m > kMaxCutoff || s.p < 2 || s.p > kMaxTaylor || !(s.sigma >= 1.25) || !(s.near_radius_px > 0))
    throw Error(ExitCode::config, fmt::format("halftone: bad fast-summation settings m={} p={} sigma={} eps={}", s.m,
                                              s.p, s.sigma, s.near_radius_px));
  FastsumPlan plan;
  plan.width = width;
  plan.height = height;
  const double diag = std::hypot(double(width), double(height));
  // eps_I = r * scale with scale = (1/2 - eps_B) / diag and eps_B = eps_I.
  const double eps_wanted = 0.5 * s.near_radius_px / (diag + s.near_radius_px);
  plan.N = std::max(16, 2 * int(std::ceil(s.p / eps_wanted / 2)));
  plan.eps_i = plan.eps_b = double(s.p) / plan.N;
  if (plan.eps_b > 0.2) throw Error(ExitCode::config, "halftone: near-field radius too large for the image");
  plan.scale = (0.5 - plan.eps_b) / diag;
  plan.n = nice_fft_size(s.sigma * plan.N);
  plan.grid_per_pixel = float(plan.scale * plan.n);
  plan.window.m = s.m;
  plan.window.m2 = float(s.m * s.m);
  plan.window.b = float(M_PI * (2.0 - double(plan.N) / plan.n));
  plan.window.inv_peak = float((M_PI * s.m) / std::sinh(double(plan.window.b) * s.m));
  // Near kernel in pixel units: the same polynomial with eps in pixels.
  const std::vector<double> a = inner_taylor(s.p);
  plan.near.terms = s.p - 1;
  plan.near.eps = float(plan.eps_i / plan.scale);
  plan.near.inv_eps2 = 1.f / (plan.near.eps * plan.near.eps);
  for (int j = 1; j < s.p; ++j) plan.near.coef[j - 1] = float(2.0 * j * a[j]);
  plan.cells_x = std::max(1, int(width / plan.near.eps));
  plan.cells_y = std::max(1, int(height / plan.near.eps));
  plan.cell_w = float(width) / plan.cells_x;
  plan.cell_h = float(height) / plan.cells_y;
  plan.regularized = regularized_kernel(plan.eps_i, plan.eps_b, s.p);
  plan.deconv.resize(plan.N);
  for (int j = -plan.N / 2; j < plan.N / 2; ++j) {
    const double c = kb_fourier(plan, j);
    plan.deconv[j + plan.N / 2] = float(1.0 / (c * c));
  }
  return plan;
}

}  // namespace sp::halftone
