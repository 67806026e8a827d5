// The kernel spectra on the device: the samples of kernel_samples.h, cuFFT
// (Z2Z double for the fast summation's coefficients, as FFTW's float64 on
// the host; R2C float for the attraction's, as FFTW's float), and the same
// post-processing, so the CPU backend's host spectra are their oracle.
#include <cufft.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>

#include "pipeline/cuda_check.h"
#include "stages/halftone/cufft_check.h"
#include "stages/halftone/kernel_samples.h"
#include "stages/halftone/kernel_spectra_gpu.h"

namespace sp::halftone {

namespace {

constexpr int kThreads = 256;

// Device memory for the span of one configure call.
class DeviceTemporary {
 public:
  explicit DeviceTemporary(size_t bytes) { SP_CUDA_CHECK(cudaMalloc(&ptr_, std::max<size_t>(bytes, 16))); }
  ~DeviceTemporary() { cudaFree(ptr_); }
  DeviceTemporary(const DeviceTemporary&) = delete;
  DeviceTemporary& operator=(const DeviceTemporary&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

// A cuFFT plan whose work area the caller provides (make, then set_work_area).
class OneShotFft {
 public:
  OneShotFft() {
    SP_CUFFT_CHECK(cufftCreate(&handle_));
    SP_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
  }
  ~OneShotFft() { cufftDestroy(handle_); }
  OneShotFft(const OneShotFft&) = delete;
  OneShotFft& operator=(const OneShotFft&) = delete;
  cufftHandle handle() const { return handle_; }

 private:
  cufftHandle handle_ = 0;
};

__global__ void sample_regularized_gradient(RegularizedKernel kernel, int N, double2* samples) {
  const int s1 = blockIdx.x * blockDim.x + threadIdx.x, s2 = blockIdx.y;
  if (s1 >= N) return;
  double2 g;
  regularized_gradient_sample(kernel, N, s1, s2, g.x, g.y);
  samples[size_t(s2) * N + s1] = g;
}

// out[a * N/2 + c] = (Im b, -Re b) d_a d_c at j = (a, c), a, c in [0, N/2):
// the quadrant the band multiply reads (kernel_spectra_gpu.h).
__global__ void quadrant_coefficients(const double2* hat, int N, const float* deconv, float2* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, a = blockIdx.y, half = N / 2;
  if (c >= half) return;
  const float2 b = kernel_coefficient(reinterpret_cast<const double*>(hat), N, a, c);
  const float d = deconv[a + half] * deconv[c + half];
  out[size_t(a) * half + c] = make_float2(b.y * d, -b.x * d);
}

__global__ void sample_attraction_kernel(int w, int h, int pw, int ph, float* gx, float* gy) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y;
  if (px >= pw) return;
  const size_t i = size_t(py) * pw + px;
  attraction_kernel_sample(px, py, w, h, pw, ph, gx[i], gy[i]);
}

// out[kx * (ph/2+1) + ky]: imaginary_kernel_rows by columns, as the CUDA
// attraction's multiply reads them (column_major_spectra); threads along ky
// write adjacent entries.
__global__ void imaginary_columns(const float2* kx_hat, const float2* ky_hat, int pw, int ph, float2* out) {
  const int rows = ph / 2 + 1;
  const int ky = blockIdx.x * blockDim.x + threadIdx.x, kx = blockIdx.y;
  if (ky >= rows) return;
  out[size_t(kx) * rows + ky] = imaginary_kernel_row_entry(reinterpret_cast<const float*>(kx_hat),
                                                           reinterpret_cast<const float*>(ky_hat), pw, ph, ky, kx);
}

int blocks(int threads) { return (threads + kThreads - 1) / kThreads; }

}  // namespace

size_t make_kernel_quadrant_on_device(const FastsumPlan& plan, float2* quadrant) {
  const int N = plan.N;
  const DeviceTemporary deconv(plan.deconv.size() * sizeof(float));
  SP_CUDA_CHECK(cudaMemcpy(deconv.as<float>(), plan.deconv.data(), plan.deconv.size() * sizeof(float),
                           cudaMemcpyHostToDevice));
  OneShotFft fft;
  size_t work_bytes = 0;
  SP_CUFFT_CHECK(cufftMakePlan2d(fft.handle(), N, N, CUFFT_Z2Z, &work_bytes));
  const DeviceTemporary samples(size_t(N) * N * sizeof(double2)), work(work_bytes);
  SP_CUFFT_CHECK(cufftSetWorkArea(fft.handle(), work.as<void>()));
  sample_regularized_gradient<<<dim3(blocks(N), N), kThreads>>>(plan.regularized, N, samples.as<double2>());
  SP_CUDA_CHECK_LAUNCH();
  auto* data = samples.as<cufftDoubleComplex>();
  SP_CUFFT_CHECK(cufftExecZ2Z(fft.handle(), data, data, CUFFT_FORWARD));  // in place: 128 MB less at 1080p
  quadrant_coefficients<<<dim3(blocks(N / 2), N / 2), kThreads>>>(samples.as<double2>(), N, deconv.as<float>(), quadrant);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cudaStreamSynchronize(0));  // report a failure here, before the temporaries go
  return size_t(N) * N * sizeof(double2) + work_bytes;
}

size_t make_attraction_kernel_columns_on_device(const AttractionPlan& plan, float2* kernel_columns) {
  const int pw = plan.pw, ph = plan.ph, columns = pw / 2 + 1;
  const size_t padded = plan.padded_size(), half = plan.half_size();
  // -G_x and -G_y as one batch of two 2D R2C transforms.
  OneShotFft fft;
  int size[2] = {ph, pw}, in_embed[2] = {ph, pw}, out_embed[2] = {ph, columns};
  size_t work_bytes = 0;
  SP_CUFFT_CHECK(cufftMakePlanMany(fft.handle(), 2, size, in_embed, 1, int(padded), out_embed, 1, int(half),
                                   CUFFT_R2C, 2, &work_bytes));
  const DeviceTemporary samples(2 * padded * sizeof(float)), spectra(2 * half * sizeof(float2)), work(work_bytes);
  SP_CUFFT_CHECK(cufftSetWorkArea(fft.handle(), work.as<void>()));
  float* g = samples.as<float>();
  sample_attraction_kernel<<<dim3(blocks(pw), ph), kThreads>>>(plan.width, plan.height, pw, ph, g, g + padded);
  SP_CUDA_CHECK_LAUNCH();
  auto* hat = spectra.as<cufftComplex>();
  SP_CUFFT_CHECK(cufftExecR2C(fft.handle(), g, hat));
  imaginary_columns<<<dim3(blocks(ph / 2 + 1), columns), kThreads>>>(hat, hat + half, pw, ph, kernel_columns);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cudaStreamSynchronize(0));  // report a failure here, before the temporaries go
  return 2 * padded * sizeof(float) + 2 * half * sizeof(float2) + work_bytes;
}

DeviceSpectrum::DeviceSpectrum(size_t count) {
  SP_CUDA_CHECK(cudaGetDevice(&device_));
  SP_CUDA_CHECK(cudaMalloc(&data_, std::max<size_t>(count, 1) * sizeof(float2)));
}

DeviceSpectrum::~DeviceSpectrum() {
  // The last holder may be a thread whose current device is another.
  int current = device_;
  cudaGetDevice(&current);
  if (current != device_) cudaSetDevice(device_);
  cudaFree(data_);
  if (current != device_) cudaSetDevice(current);
}

namespace {

// One spectrum per key while any stage holds it; concurrent callers with one
// key wait for the first one's.
template <class Key>
class SharedSpectra {
 public:
  std::shared_ptr<const DeviceSpectrum> get(const Key& key, size_t count, const std::function<void(float2*)>& make) {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard lock(mutex_);
      std::shared_ptr<Slot>& s = slots_[key];
      if (!s) s = std::make_shared<Slot>();
      slot = s;
    }
    std::lock_guard making(slot->making);
    if (std::shared_ptr<const DeviceSpectrum> made = slot->made.lock()) return made;
    auto made = std::make_shared<DeviceSpectrum>(count);
    make(made->data());
    slot->made = made;
    return made;
  }

 private:
  struct Slot {
    std::mutex making;
    std::weak_ptr<const DeviceSpectrum> made;
  };
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<Slot>> slots_;
};

int current_device() {
  int device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

}  // namespace

std::shared_ptr<const DeviceSpectrum> shared_kernel_quadrant(const FastsumPlan& plan) {
  // What the quadrant is made from: N and the regularized kernel (the
  // samples), the window and n (the deconvolution).
  using Key = std::tuple<int, int, int, int, uint32_t, double, double, int>;
  static SharedSpectra<Key> shared;
  const Key key{current_device(), plan.N, plan.n, plan.window.m, std::bit_cast<uint32_t>(plan.window.b),
                plan.eps_i, plan.eps_b, plan.regularized.inner_terms};
  return shared.get(key, size_t(plan.N / 2) * (plan.N / 2),
                    [&](float2* quadrant) { make_kernel_quadrant_on_device(plan, quadrant); });
}

std::shared_ptr<const DeviceSpectrum> shared_attraction_kernel_columns(const AttractionPlan& plan) {
  using Key = std::tuple<int, int, int, int, int>;
  static SharedSpectra<Key> shared;
  const Key key{current_device(), plan.width, plan.height, plan.pw, plan.ph};
  return shared.get(key, size_t(plan.ph / 2 + 1) * (plan.pw / 2 + 1),
                    [&](float2* columns) { make_attraction_kernel_columns_on_device(plan, columns); });
}

}  // namespace sp::halftone
