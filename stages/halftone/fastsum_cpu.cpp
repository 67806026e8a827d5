// CPU fast summation: spread (B^T) by grid rows so threads never share a
// cell, FFTW R2C, multiply by the kernel's coefficients with the window's
// deconvolution (D) on the fly, FFTW C2C back, interpolate (B); plus the
// exact near field over the cell table and the float64 direct oracle.
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "pipeline/parallel.h"
#include "stages/halftone/fastsum.h"

namespace sp::halftone {

namespace {
int wrap(int i, int n) { return ((i % n) + n) % n; }
}  // namespace

FastsumCpu::FastsumCpu(const FastsumPlan& plan, int capacity)
    : plan_(plan), kernel_hat_(shared_host_kernel_hat(plan)), capacity_(capacity) {
  const size_t n = size_t(plan.n);
  cell_start_.assign(size_t(plan.cells()) + 1, 0);
  cell_key_.resize(capacity);
  sorted_.resize(capacity);
  weights_.resize(size_t(capacity) * 4 * plan.window.m);
  first_.resize(size_t(capacity) * 2);
  grid_ = static_cast<float*>(fftwf_malloc(sizeof(float) * n * n));
  half_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * n * (n / 2 + 1)));
  band_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * n * n));
  field_ = static_cast<std::complex<float>*>(fftwf_malloc(sizeof(fftwf_complex) * n * n));
  init_fftw_threads();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftwf_plan_with_nthreads(worker_count());
  r2c_ = fftwf_plan_dft_r2c_2d(int(n), int(n), grid_, reinterpret_cast<fftwf_complex*>(half_), FFTW_ESTIMATE);
  c2c_ = fftwf_plan_dft_2d(int(n), int(n), reinterpret_cast<fftwf_complex*>(band_),
                           reinterpret_cast<fftwf_complex*>(field_), FFTW_BACKWARD, FFTW_ESTIMATE);
  std::memset(static_cast<void*>(band_), 0, sizeof(fftwf_complex) * n * n);  // outside the band stays zero
}

FastsumCpu::~FastsumCpu() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftwf_destroy_plan(static_cast<fftwf_plan>(r2c_));
  fftwf_destroy_plan(static_cast<fftwf_plan>(c2c_));
  fftwf_free(grid_);
  fftwf_free(half_);
  fftwf_free(band_);
  fftwf_free(field_);
}

void FastsumCpu::sort(float2* pos, int count, float2* carried) {
  const FastsumPlan& p = plan_;
  const float icw = 1.f / p.cell_w, ich = 1.f / p.cell_h;
  std::fill(cell_start_.begin(), cell_start_.end(), 0);
  for (int i = 0; i < count; ++i) {
    cell_key_[i] = cell_of(pos[i].x, pos[i].y, p.cells_x, p.cells_y, icw, ich);
    ++cell_start_[cell_key_[i] + 1];
  }
  for (int c = 0; c < p.cells(); ++c) cell_start_[c + 1] += cell_start_[c];
  std::vector<int> next(cell_start_.begin(), cell_start_.end() - 1);
  for (int i = 0; i < count; ++i) cell_key_[i] = next[cell_key_[i]]++;  // now the slot
  for (float2* values : {pos, carried}) {
    if (!values) continue;
    for (int i = 0; i < count; ++i) sorted_[cell_key_[i]] = values[i];
    std::copy(sorted_.begin(), sorted_.begin() + count, values);
  }
}

void FastsumCpu::window_weights_at(const float2* pos, int count) {
  const FastsumPlan& p = plan_;
  const int m2 = 2 * p.window.m;
  const float cx = 0.5f * p.width, cy = 0.5f * p.height;
  parallel_for(
      count,
      [&](int b, int e) {
        for (int i = b; i < e; ++i) {
          float* w = &weights_[size_t(i) * 2 * m2];
          first_[2 * i] = window_weights(p.window, (pos[i].x - cx) * p.grid_per_pixel, w);
          first_[2 * i + 1] = window_weights(p.window, (pos[i].y - cy) * p.grid_per_pixel, w + m2);
        }
      },
      256);
}

void FastsumCpu::spread(const float2* pos, int count) {
  const FastsumPlan& p = plan_;
  const int m2 = 2 * p.window.m, n = p.n;
  const float cy = 0.5f * p.height;
  window_weights_at(pos, count);
  // Gather form of B^T: each grid row sums the particles of the cell rows it
  // can see, so rows are independent and the sum order is fixed.
  parallel_for(
      n,
      [&](int r0, int r1) {
        for (int row = r0; row < r1; ++row) {
          float* out = grid_ + size_t(row) * n;
          std::fill(out, out + n, 0.f);
          const int v = row < n / 2 ? row : row - n;
          const float ylo = cy + float(v - p.window.m) / p.grid_per_pixel;
          const float yhi = cy + float(v + p.window.m) / p.grid_per_pixel;
          if (yhi < 0.f || ylo >= float(p.height)) continue;
          const int c0 = std::max(0, int(ylo / p.cell_h) - 1), c1 = std::min(p.cells_y - 1, int(yhi / p.cell_h) + 1);
          const int b = cell_start_[size_t(c0) * p.cells_x], e = cell_start_[size_t(c1 + 1) * p.cells_x];
          for (int i = b; i < e; ++i) {
            const int k = v - first_[2 * i + 1];
            if (k < 0 || k >= m2) continue;
            const float* w = &weights_[size_t(i) * 2 * m2];
            const float wy = w[m2 + k];
            const int fx = first_[2 * i];
            for (int j = 0; j < m2; ++j) out[wrap(fx + j, n)] += wy * w[j];
          }
        }
      },
      8);
}

void FastsumCpu::multiply() {
  const FastsumPlan& p = plan_;
  const int N = p.N, n = p.n, hw = n / 2 + 1;
  const std::complex<float>* hat = kernel_hat_->data();
  parallel_for(N - 1, [&](int b, int e) {
    for (int r = b; r < e; ++r) {
      const int j2 = r - N / 2 + 1;
      for (int j1 = -N / 2 + 1; j1 < N / 2; ++j1) {
        const std::complex<float> g = j1 >= 0 ? half_[size_t(wrap(j2, n)) * hw + j1]
                                              : std::conj(half_[size_t(wrap(-j2, n)) * hw - j1]);
        const float d = p.deconv[j1 + N / 2] * p.deconv[j2 + N / 2];
        band_[size_t(wrap(j2, n)) * n + wrap(j1, n)] = g * (hat[size_t(j2 + N / 2) * N + j1 + N / 2] * d);
      }
    }
  });
}

void FastsumCpu::far_field(const float2* pos, int count, float2* force) {
  spread(pos, count);
  fftwf_execute(static_cast<fftwf_plan>(r2c_));
  multiply();
  fftwf_execute(static_cast<fftwf_plan>(c2c_));
  interpolate(count, force);
}

void FastsumCpu::far_field_of_last_spread(const float2* pos, int count, float2* force) {
  window_weights_at(pos, count);
  interpolate(count, force);
}

void FastsumCpu::interpolate(int count, float2* force) const {
  const FastsumPlan& p = plan_;
  const int m2 = 2 * p.window.m, n = p.n;
  const float s = float(p.scale);
  parallel_for(
      count,
      [&](int b, int e) {
        for (int i = b; i < e; ++i) {
          const float* w = &weights_[size_t(i) * 2 * m2];
          const int fx = first_[2 * i], fy = first_[2 * i + 1];
          float ax = 0.f, ay = 0.f;
          for (int k = 0; k < m2; ++k) {
            const std::complex<float>* row = field_ + size_t(wrap(fy + k, n)) * n;
            float rx = 0.f, ry = 0.f;
            for (int j = 0; j < m2; ++j) {
              const std::complex<float> f = row[wrap(fx + j, n)];
              rx += w[j] * f.real();
              ry += w[j] * f.imag();
            }
            ax += w[m2 + k] * rx;
            ay += w[m2 + k] * ry;
          }
          force[i] = make_float2(s * ax, s * ay);
        }
      },
      256);
}

void FastsumCpu::add_near_field(const float2* pos, int count, float2* force) const {
  const FastsumPlan& p = plan_;
  const float icw = 1.f / p.cell_w, ich = 1.f / p.cell_h;
  parallel_for(
      count,
      [&](int b, int e) {
        for (int i = b; i < e; ++i) {
          const int c = cell_of(pos[i].x, pos[i].y, p.cells_x, p.cells_y, icw, ich);
          const int cx = c % p.cells_x, cy = c / p.cells_x;
          float fx = 0.f, fy = 0.f;
          for (int y = std::max(cy - 1, 0); y <= std::min(cy + 1, p.cells_y - 1); ++y) {
            const size_t row = size_t(y) * p.cells_x;
            const int lo = cell_start_[row + std::max(cx - 1, 0)];
            const int hi = cell_start_[row + std::min(cx + 1, p.cells_x - 1) + 1];
            for (int j = lo; j < hi; ++j)
              if (j != i) near_correction(p.near, pos[i].x - pos[j].x, pos[i].y - pos[j].y, fx, fy);
          }
          force[i].x += fx;
          force[i].y += fy;
        }
      },
      256);
}

void FastsumCpu::forces(const float2* pos, int count, float2* force) {
  far_field(pos, count, force);
  add_near_field(pos, count, force);
}

void direct_forces(const float2* pos, int count, double* fx, double* fy) {
  parallel_for(
      count,
      [&](int b, int e) {
        for (int i = b; i < e; ++i) {
          double sx = 0, sy = 0;
          for (int j = 0; j < count; ++j) {
            const double dx = double(pos[i].x) - pos[j].x, dy = double(pos[i].y) - pos[j].y;
            const double r2 = dx * dx + dy * dy;
            if (j == i || r2 == 0) continue;
            sx += dx / r2;
            sy += dy / r2;
          }
          fx[i] = sx;
          fy[i] = sy;
        }
      },
      16);
}

}  // namespace sp::halftone
