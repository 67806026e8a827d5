// Attraction field on the CPU (FFTW) and its kernel spectra (the CUDA
// backend makes its own on the device, kernel_spectra.cu).
#include <fftw3.h>

#include <algorithm>
#include <cstring>

#include "pipeline/parallel.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/fastsum.h"
#include "stages/halftone/kernel_samples.h"
#include "stages/halftone/recent_plans.h"

namespace sp::halftone {

AttractionPlan make_attraction_plan(int width, int height) {
  AttractionPlan p;
  p.width = width;
  p.height = height;
  p.pw = nice_fft_size(2.0 * width);
  p.ph = nice_fft_size(2.0 * height);
  return p;
}

AttractionSpectra host_attraction_spectra(const AttractionPlan& p) {
  // conv(x) = sum_y ink(y) G(x - y) with G(d) = d / |d|^2; F_A = -lambda conv.
  std::vector<float> gx(p.padded_size()), gy(p.padded_size());
  parallel_for(p.ph, [&](int begin, int end) {
    for (int py = begin; py < end; ++py)
      for (int px = 0; px < p.pw; ++px) {
        const size_t i = size_t(py) * p.pw + px;
        attraction_kernel_sample(px, py, p.width, p.height, p.pw, p.ph, gx[i], gy[i]);
      }
  });
  AttractionSpectra s;
  s.kx_hat.resize(p.half_size());
  s.ky_hat.resize(p.half_size());
  init_fftw_threads();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftwf_plan_with_nthreads(worker_count());
  for (auto [g, hat] : {std::pair{&gx, &s.kx_hat}, std::pair{&gy, &s.ky_hat}}) {
    fftwf_plan r2c = fftwf_plan_dft_r2c_2d(p.ph, p.pw, g->data(), reinterpret_cast<fftwf_complex*>(hat->data()),
                                           FFTW_ESTIMATE);
    fftwf_execute(r2c);
    fftwf_destroy_plan(r2c);
  }
  return s;
}

std::shared_ptr<const std::vector<float2>> shared_host_kernel_rows(const AttractionPlan& plan) {
  static RecentPlans<std::pair<int, int>, std::vector<float2>> recent(4);
  return recent.get({plan.width, plan.height},
                    [&] { return imaginary_kernel_rows(plan, host_attraction_spectra(plan)); });
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

std::vector<float2> imaginary_kernel_rows(const AttractionPlan& p, const AttractionSpectra& s) {
  const int columns = p.pw / 2 + 1, rows = p.ph / 2 + 1;
  const auto* kx = reinterpret_cast<const float*>(s.kx_hat.data());
  const auto* ky = reinterpret_cast<const float*>(s.ky_hat.data());
  std::vector<float2> out(size_t(rows) * columns);
  for (int row = 0; row < rows; ++row)
    for (int column = 0; column < columns; ++column)
      out[size_t(row) * columns + column] = imaginary_kernel_row_entry(kx, ky, p.pw, p.ph, row, column);
  return out;
}

namespace {

// A batch of 1D transforms of length n, element i of transform b at
// base + b * dist + i * stride: FFTW's advanced layout, as cuFFT's in attraction.cu.
enum class Transform { r2c, c2r, forward, inverse };

fftwf_plan plan_1d(Transform kind, int n, int batch, void* in, int istride, int idist, void* out, int ostride,
                   int odist) {
  int length[1] = {n};
  auto* cin = reinterpret_cast<fftwf_complex*>(in);
  auto* cout = reinterpret_cast<fftwf_complex*>(out);
  switch (kind) {
    case Transform::r2c:
      return fftwf_plan_many_dft_r2c(1, length, batch, static_cast<float*>(in), nullptr, istride, idist, cout, nullptr,
                                     ostride, odist, FFTW_ESTIMATE);
    case Transform::c2r:  // destroys its input, the products, which are rewritten every frame
      return fftwf_plan_many_dft_c2r(1, length, batch, cin, nullptr, istride, idist, static_cast<float*>(out), nullptr,
                                     ostride, odist, FFTW_ESTIMATE);
    default:
      return fftwf_plan_many_dft(1, length, batch, cin, nullptr, istride, idist, cout, nullptr, ostride, odist,
                                 kind == Transform::forward ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
  }
}

}  // namespace

AttractionCpu::AttractionCpu(const AttractionPlan& plan) : plan_(plan), kernel_rows_(shared_host_kernel_rows(plan)) {
  const int h = plan.height, pw = plan.pw, ph = plan.ph, columns = pw / 2 + 1;
  const size_t half = plan.half_size();
  ink_rows_ = static_cast<float*>(fftwf_malloc(sizeof(float) * size_t(h) * pw));
  row_spectra_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * half));
  spectrum_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * half));
  products_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * 2 * half));
  field_rows_ = static_cast<float*>(fftwf_malloc(sizeof(float) * 2 * size_t(h) * pw));
  std::memset(ink_rows_, 0, sizeof(float) * size_t(h) * pw);  // columns >= w stay zero
  std::fill_n(row_spectra_, half, std::complex<float>());  // rows >= h stay zero
  init_fftw_threads();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftwf_plan_with_nthreads(worker_count());
  row_r2c_ = plan_1d(Transform::r2c, pw, h, ink_rows_, 1, pw, row_spectra_, 1, columns);
  column_forward_ = plan_1d(Transform::forward, ph, columns, row_spectra_, columns, 1, spectrum_, columns, 1);
  column_inverse_ = plan_1d(Transform::inverse, ph, 2 * columns, products_, 2 * columns, 1, products_, 2 * columns, 1);
  row_c2r_ = plan_1d(Transform::c2r, pw, 2 * h, products_, 1, columns, field_rows_, 1, pw);
}

AttractionCpu::~AttractionCpu() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  for (void* p : {row_r2c_, column_forward_, column_inverse_, row_c2r_}) fftwf_destroy_plan(static_cast<fftwf_plan>(p));
  fftwf_free(ink_rows_);
  fftwf_free(row_spectra_);
  fftwf_free(spectrum_);
  fftwf_free(products_);
  fftwf_free(field_rows_);
}

void AttractionCpu::compute(const float* ink, float lambda, float* fx, float* fy) {
  const AttractionPlan& p = plan_;
  const int w = p.width, h = p.height, pw = p.pw, ph = p.ph, columns = pw / 2 + 1;
  const float2* kernel_rows = kernel_rows_->data();
  for (int y = 0; y < h; ++y) std::memcpy(ink_rows_ + size_t(y) * pw, ink + size_t(y) * w, sizeof(float) * w);
  fftwf_execute(static_cast<fftwf_plan>(row_r2c_));  // out of place: its input (the zero columns) is preserved
  fftwf_execute(static_cast<fftwf_plan>(column_forward_));
  const auto* spectrum = reinterpret_cast<const float2*>(spectrum_);
  auto* products = reinterpret_cast<float2*>(products_);
  const SpectrumLayout layout = row_major_spectra(columns);
  parallel_for(ph / 2 + 1, [&](int begin, int end) {
    for (int ky = begin; ky < end; ++ky)
      for (int kx = 0; kx < columns; ++kx) multiply_kernel_rows(spectrum, kernel_rows, layout, ph, lambda, ky, kx, products);
  });
  fftwf_execute(static_cast<fftwf_plan>(column_inverse_));
  fftwf_execute(static_cast<fftwf_plan>(row_c2r_));  // the first h rows of each product only
  for (int y = 0; y < h; ++y) {
    std::memcpy(fx + size_t(y) * w, field_rows_ + size_t(2 * y) * pw, sizeof(float) * w);
    std::memcpy(fy + size_t(y) * w, field_rows_ + size_t(2 * y + 1) * pw, sizeof(float) * w);
  }
}

}  // namespace sp::halftone
