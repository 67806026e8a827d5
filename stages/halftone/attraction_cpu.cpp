// Attraction field on the CPU (FFTW) and the kernel spectra both backends use.
#include <fftw3.h>

#include <cstring>

#include "pipeline/parallel.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/fastsum.h"
#include "stages/halftone/recent_plans.h"

namespace sp::halftone {

AttractionPlan shared_attraction_plan(int width, int height) {
  static RecentPlans<std::pair<int, int>, AttractionPlan> recent(4);
  return *recent.get({width, height}, [&] { return make_attraction_plan(width, height); });
}

AttractionPlan make_attraction_plan(int width, int height) {
  AttractionPlan p;
  p.width = width;
  p.height = height;
  p.pw = nice_fft_size(2.0 * width);
  p.ph = nice_fft_size(2.0 * height);
  std::vector<float> gx(p.padded_size(), 0.f), gy(p.padded_size(), 0.f);
  // conv(x) = sum_y ink(y) G(x - y) with G(d) = d / |d|^2; F_A = -lambda conv.
  const float norm = -1.f / (float(p.pw) * float(p.ph));
  parallel_for(2 * height - 1, [&](int begin, int end) {  // each dy is its own row of the padded grid
    for (int dy = begin - height + 1; dy < end - height + 1; ++dy)
      for (int dx = -width + 1; dx < width; ++dx) {
        if (dx == 0 && dy == 0) continue;
        const float r2 = float(dx * dx + dy * dy);
        const size_t i = size_t((dy + p.ph) % p.ph) * p.pw + (dx + p.pw) % p.pw;
        gx[i] = norm * dx / r2;
        gy[i] = norm * dy / r2;
      }
  });
  p.kx_hat.resize(p.half_size());
  p.ky_hat.resize(p.half_size());
  init_fftw_threads();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftwf_plan_with_nthreads(worker_count());
  for (auto [g, hat] : {std::pair{&gx, &p.kx_hat}, std::pair{&gy, &p.ky_hat}}) {
    fftwf_plan r2c = fftwf_plan_dft_r2c_2d(p.ph, p.pw, g->data(), reinterpret_cast<fftwf_complex*>(hat->data()),
                                           FFTW_ESTIMATE);
    fftwf_execute(r2c);
    fftwf_destroy_plan(r2c);
  }
  return p;
}

void direct_attraction(const float* ink, int w, int h, int x, int y, double& fx, double& fy) {
  fx = fy = 0;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      if (i == x && j == y) continue;
      const double dx = i - x, dy = j - y, r2 = dx * dx + dy * dy, u = ink[size_t(j) * w + i];
      fx += u * dx / r2;
      fy += u * dy / r2;
    }
}

AttractionCpu::AttractionCpu(const AttractionPlan& plan) : plan_(plan) {
  padded_ = static_cast<float*>(fftwf_malloc(sizeof(float) * plan.padded_size()));
  result_ = static_cast<float*>(fftwf_malloc(sizeof(float) * plan.padded_size()));
  spectrum_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * plan.half_size()));
  product_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * plan.half_size()));
  std::memset(padded_, 0, sizeof(float) * plan.padded_size());
  init_fftw_threads();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftwf_plan_with_nthreads(worker_count());
  r2c_ = fftwf_plan_dft_r2c_2d(plan.ph, plan.pw, padded_, reinterpret_cast<fftwf_complex*>(spectrum_), FFTW_ESTIMATE);
  c2r_ = fftwf_plan_dft_c2r_2d(plan.ph, plan.pw, reinterpret_cast<fftwf_complex*>(product_), result_, FFTW_ESTIMATE);
}

AttractionCpu::~AttractionCpu() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftwf_destroy_plan(static_cast<fftwf_plan>(r2c_));
  fftwf_destroy_plan(static_cast<fftwf_plan>(c2r_));
  fftwf_free(padded_);
  fftwf_free(result_);
  fftwf_free(spectrum_);
  fftwf_free(product_);
}

void AttractionCpu::compute(const float* ink, float lambda, float* fx, float* fy) {
  const AttractionPlan& p = plan_;
  for (int y = 0; y < p.height; ++y) std::memcpy(padded_ + size_t(y) * p.pw, ink + size_t(y) * p.width, sizeof(float) * p.width);
  fftwf_execute(static_cast<fftwf_plan>(r2c_));
  for (auto [hat, out] : {std::pair{&p.kx_hat, fx}, std::pair{&p.ky_hat, fy}}) {
    const std::complex<float>* k = hat->data();
    parallel_for(int(p.half_size()), [&](int b, int e) {
      for (int i = b; i < e; ++i) product_[i] = spectrum_[i] * k[i] * lambda;
    }, 4096);
    fftwf_execute(static_cast<fftwf_plan>(c2r_));  // C2R overwrites product_: recomputed per component
    for (int y = 0; y < p.height; ++y)
      std::memcpy(out + size_t(y) * p.width, result_ + size_t(y) * p.pw, sizeof(float) * p.width);
  }
}

}  // namespace sp::halftone
