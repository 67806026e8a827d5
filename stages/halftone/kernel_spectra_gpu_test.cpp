// The kernel spectra made on the device at configure (kernel_spectra.cu)
// against the host's (FFTW, the CPU backend's): the fast summation's b_j at
// an odd, non-square frame and at 1080p's N, and the attraction's imaginary
// kernel rows. Both from the same samples (kernel_samples.h), so they agree to
// the float rounding of the result, well under 1e-6 of the largest magnitude.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>

#include "pipeline/buffer_pool.h"
#include "pipeline/cuda_check.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/fastsum_gpu.h"
#include "stages/halftone/halftone_test_util.h"
#include "stages/halftone/kernel_spectra_gpu.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// max |device - host| / max |host| over pairs of floats (x + i y).
double relative_max_error(const std::vector<float2>& device, const std::vector<float2>& host) {
  double peak = 0, error = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    peak = std::max(peak, std::hypot(double(host[i].x), double(host[i].y)));
    error = std::max(error, std::hypot(double(device[i].x) - host[i].x, double(device[i].y) - host[i].y));
  }
  return peak > 0 ? error / peak : error;
}

TEST(HalftoneCuda, KernelHatMadeOnDeviceMatchesHost) {
  SP_REQUIRE_CUDA();
  // The stage's near radius at its defaults (near_neighbours 24 at half ink
  // of dots_per_pixel 0.25) gives N = 2828 at 1920x1080.
  const double stage_radius = std::sqrt(24.0 / (M_PI * 0.125));
  for (auto [w, h, radius] : {std::tuple{131, 77, 4.0}, std::tuple{1920, 1080, stage_radius}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    FastsumSettings s;
    s.near_radius_px = radius;
    const FastsumPlan plan = make_fastsum_plan(w, h, s);
    const int N = plan.N;
    BufferPool pool;
    PooledScratch scratch(pool, MemoryKind::device);
    FastsumGpu gpu;
    const auto start = std::chrono::steady_clock::now();
    gpu.configure(plan, 1000, scratch);  // makes kernel_hat on the device
    const double configure_ms = elapsed_ms(start);
    const std::vector<float2> device = to_host(gpu.device_plan().kernel_hat, size_t(N) * N);
    // Again, for the timing alone (the first call above paid cuFFT's and the context's start) and the memory.
    float2* d_hat = nullptr;
    SP_CUDA_CHECK(cudaMalloc(&d_hat, size_t(N) * N * sizeof(float2)));
    const auto again = std::chrono::steady_clock::now();
    const size_t borrowed = make_kernel_hat_on_device(plan, d_hat);
    const double device_ms = elapsed_ms(again);
    SP_CUDA_CHECK(cudaFree(d_hat));
    const auto host_start = std::chrono::steady_clock::now();
    const KernelHat hat = host_kernel_hat(plan);
    const double host_ms = elapsed_ms(host_start);
    std::vector<float2> host_transposed(size_t(N) * N);
    for (int a = 0; a < N; ++a)
      for (int b = 0; b < N; ++b) {
        const std::complex<float> v = hat[size_t(a) * N + b];
        host_transposed[size_t(b) * N + a] = make_float2(v.real(), v.imag());
      }
    const double error = relative_max_error(device, host_transposed);
    std::printf("N = %d: device kernel_hat vs host: relative max error %.3g; FastsumGpu::configure %.1f ms, "
                "make_kernel_hat_on_device again %.1f ms (%.1f MB of temporaries), host_kernel_hat %.1f ms\n",
                N, error, configure_ms, device_ms, borrowed / 1048576.0, host_ms);
    EXPECT_LE(error, 1e-6);
    for (int j = 0; j < N; ++j)  // the Nyquist row and column (j = -N/2) stay zero
      for (const float2 b : {device[j], device[size_t(j) * N]}) {
        EXPECT_EQ(b.x, 0.f);
        EXPECT_EQ(b.y, 0.f);
      }
  }
}

TEST(HalftoneCuda, AttractionKernelRowsMadeOnDeviceMatchHost) {
  SP_REQUIRE_CUDA();
  for (auto [w, h] : {std::pair{131, 77}, std::pair{61, 103}, std::pair{1920, 1080}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    const AttractionPlan plan = make_attraction_plan(w, h);
    const size_t rows = size_t(plan.ph / 2 + 1) * (plan.pw / 2 + 1);
    float2* d_rows = nullptr;
    SP_CUDA_CHECK(cudaMalloc(&d_rows, rows * sizeof(float2)));
    const auto start = std::chrono::steady_clock::now();
    const size_t borrowed = make_attraction_kernel_rows_on_device(plan, d_rows);
    const double device_ms = elapsed_ms(start);
    const std::vector<float2> device = to_host(d_rows, rows);
    SP_CUDA_CHECK(cudaFree(d_rows));
    const auto host_start = std::chrono::steady_clock::now();
    const std::vector<float2> host = imaginary_kernel_rows(plan, host_attraction_spectra(plan));
    const double host_ms = elapsed_ms(host_start);
    const double error = relative_max_error(device, host);
    std::printf("%dx%d (padded %dx%d): device kernel rows vs host: relative max error %.3g; device %.1f ms "
                "(%.1f MB of temporaries), host %.1f ms\n", w, h, plan.pw, plan.ph, error, device_ms,
                borrowed / 1048576.0, host_ms);
    EXPECT_LE(error, 1e-6);
  }
}

}  // namespace
}  // namespace sp::halftone
