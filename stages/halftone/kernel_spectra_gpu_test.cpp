// The kernel spectra made on the device at configure (kernel_spectra.cu)
// against the host's (FFTW, the CPU backend's): the fast summation's b_j
// quadrant at an odd, non-square frame and at 1080p's N, and the
// attraction's imaginary kernel rows. Both from the same samples
// (kernel_samples.h), so they agree to the float rounding of the result,
// well under 1e-6 of the largest magnitude.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <future>
#include <random>
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

TEST(HalftoneCuda, KernelQuadrantMadeOnDeviceMatchesHost) {
  SP_REQUIRE_CUDA();
  // The stage's near radius at its defaults (near_neighbours at half ink of
  // dots_per_pixel 0.25) gives its N at 1920x1080.
  const double stage_radius = std::sqrt(kDefaultNearNeighbours / (M_PI * 0.125));
  for (auto [w, h, radius] : {std::tuple{131, 77, 4.0}, std::tuple{1920, 1080, stage_radius}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    FastsumSettings s;
    s.near_radius_px = radius;
    const FastsumPlan plan = make_fastsum_plan(w, h, s);
    const int N = plan.N, half = N / 2;
    BufferPool pool;
    PooledScratch scratch(pool, MemoryKind::device);
    FastsumGpu gpu;
    const auto start = std::chrono::steady_clock::now();
    gpu.configure(plan, 1000, scratch);  // makes the quadrant on the device
    const double configure_ms = elapsed_ms(start);
    const std::vector<float2> device = to_host(gpu.device_plan().kernel_quadrant, size_t(half) * half);
    // Again, for the timing alone (the first call above paid cuFFT's and the context's start) and the memory.
    float2* d_quadrant = nullptr;
    SP_CUDA_CHECK(cudaMalloc(&d_quadrant, size_t(half) * half * sizeof(float2)));
    const auto again = std::chrono::steady_clock::now();
    const size_t borrowed = make_kernel_quadrant_on_device(plan, d_quadrant);
    const double device_ms = elapsed_ms(again);
    SP_CUDA_CHECK(cudaFree(d_quadrant));
    const auto host_start = std::chrono::steady_clock::now();
    const KernelHat hat = host_kernel_hat(plan);
    const double host_ms = elapsed_ms(host_start);
    // hat index (j2 + N/2) * N + j1 + N/2.
    const auto b = [&](int j1, int j2) { return hat[size_t(j2 + half) * N + j1 + half]; };
    // The symmetries the quadrant stands on, over the whole table: Im b odd
    // in j1 and even in j2, Re b(j1, j2) = -Im b(j2, j1).
    std::vector<float2> whole, mirrored;
    for (int j2 = -half + 1; j2 < half; ++j2)
      for (int j1 = -half + 1; j1 < half; ++j1) {
        whole.push_back(make_float2(b(j1, j2).real(), b(j1, j2).imag()));
        const float im = b(std::abs(j1), std::abs(j2)).imag() * (j1 < 0 ? -1.f : 1.f);
        const float re = -b(std::abs(j2), std::abs(j1)).imag() * (j2 < 0 ? -1.f : 1.f);
        mirrored.push_back(make_float2(re, im));
      }
    const double asymmetry = relative_max_error(mirrored, whole);
    std::vector<float2> host_quadrant(size_t(half) * half);
    for (int a = 0; a < half; ++a)
      for (int c = 0; c < half; ++c) {
        const float d = plan.deconv[size_t(a + half)] * plan.deconv[size_t(c + half)];
        host_quadrant[size_t(a) * half + c] = make_float2(b(a, c).imag() * d, -b(a, c).real() * d);
      }
    const double error = relative_max_error(device, host_quadrant);
    std::printf("N = %d: host b_j against its mirrored quadrant: relative max error %.3g; device quadrant vs host: "
                "%.3g; FastsumGpu::configure %.1f ms, make_kernel_quadrant_on_device again %.1f ms (%.1f MB of "
                "temporaries), host_kernel_hat %.1f ms\n",
                N, asymmetry, error, configure_ms, device_ms, borrowed / 1048576.0, host_ms);
    EXPECT_LE(asymmetry, 1e-6);
    EXPECT_LE(error, 1e-6);
  }
}

TEST(HalftoneCuda, AttractionKernelColumnsMadeOnDeviceMatchHost) {
  SP_REQUIRE_CUDA();
  for (auto [w, h] : {std::pair{131, 77}, std::pair{61, 103}, std::pair{1920, 1080}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    const AttractionPlan plan = make_attraction_plan(w, h);
    const int rows = plan.ph / 2 + 1, columns = plan.pw / 2 + 1;
    const size_t entries = size_t(rows) * columns;
    float2* d_columns = nullptr;
    SP_CUDA_CHECK(cudaMalloc(&d_columns, entries * sizeof(float2)));
    const auto start = std::chrono::steady_clock::now();
    const size_t borrowed = make_attraction_kernel_columns_on_device(plan, d_columns);
    const double device_ms = elapsed_ms(start);
    const std::vector<float2> device = to_host(d_columns, entries);
    SP_CUDA_CHECK(cudaFree(d_columns));
    const auto host_start = std::chrono::steady_clock::now();
    const std::vector<float2> host_rows = imaginary_kernel_rows(plan, host_attraction_spectra(plan));
    const double host_ms = elapsed_ms(host_start);
    std::vector<float2> host(entries);  // the host's rows, by columns
    for (int ky = 0; ky < rows; ++ky)
      for (int kx = 0; kx < columns; ++kx) host[size_t(kx) * rows + ky] = host_rows[size_t(ky) * columns + kx];
    const double error = relative_max_error(device, host);
    std::printf("%dx%d (padded %dx%d): device kernel columns vs host: relative max error %.3g; device %.1f ms "
                "(%.1f MB of temporaries), host %.1f ms\n", w, h, plan.pw, plan.ph, error, device_ms,
                borrowed / 1048576.0, host_ms);
    EXPECT_LE(error, 1e-6);
  }
}

// The spectra of a plan are made once a device while any stage holds them:
// stages configured with one plan (from several threads at once, as the
// workers of one GPU configure) read the same memory, which holds what a
// spectrum made on its own holds; another plan gets its own; once the last
// holder is gone the memory is freed.
TEST(HalftoneCuda, KernelSpectraAreMadeOnceADeviceWhileHeld) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed());
  const int w = 64 + int(rng() % 200), h = 48 + int(rng() % 150);
  SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
  FastsumSettings s;
  s.near_radius_px = 3.0 + double(rng() % 40) / 10;
  const FastsumPlan plan = make_fastsum_plan(w, h, s);
  const AttractionPlan attraction = make_attraction_plan(w, h);
  std::vector<std::future<std::pair<const float2*, const float2*>>> made;
  std::vector<std::shared_ptr<const DeviceSpectrum>> held;
  std::mutex held_mutex;
  for (int k = 0; k < 4; ++k)
    made.push_back(std::async(std::launch::async, [&] {
      auto quadrant = shared_kernel_quadrant(plan);
      auto columns = shared_attraction_kernel_columns(attraction);
      std::lock_guard lock(held_mutex);
      held.push_back(quadrant);
      held.push_back(columns);
      return std::pair<const float2*, const float2*>(quadrant->data(), columns->data());
    }));
  const std::pair<const float2*, const float2*> first = made[0].get();
  for (size_t k = 1; k < made.size(); ++k) EXPECT_EQ(made[k].get(), first) << "thread " << k << " made its own";

  const size_t half = size_t(plan.N / 2), entries = size_t(attraction.ph / 2 + 1) * (attraction.pw / 2 + 1);
  float2 *alone_quadrant = nullptr, *alone_columns = nullptr;
  SP_CUDA_CHECK(cudaMalloc(&alone_quadrant, half * half * sizeof(float2)));
  SP_CUDA_CHECK(cudaMalloc(&alone_columns, entries * sizeof(float2)));
  make_kernel_quadrant_on_device(plan, alone_quadrant);
  make_attraction_kernel_columns_on_device(attraction, alone_columns);
  const auto same = [](const std::vector<float2>& a, const std::vector<float2>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float2)) == 0;
  };
  EXPECT_TRUE(same(to_host(first.first, half * half), to_host(alone_quadrant, half * half)));
  EXPECT_TRUE(same(to_host(first.second, entries), to_host(alone_columns, entries)));
  SP_CUDA_CHECK(cudaFree(alone_quadrant));
  SP_CUDA_CHECK(cudaFree(alone_columns));

  FastsumSettings wider = s;
  wider.near_radius_px = s.near_radius_px * 2;
  const FastsumPlan other = make_fastsum_plan(w, h, wider);
  ASSERT_NE(other.N, plan.N);
  EXPECT_NE(shared_kernel_quadrant(other)->data(), first.first) << "another plan shares the first one's quadrant";

  std::weak_ptr<const DeviceSpectrum> quadrant = held.front();
  held.clear();
  EXPECT_TRUE(quadrant.expired()) << "the spectrum outlived its last holder";
}

}  // namespace
}  // namespace sp::halftone
