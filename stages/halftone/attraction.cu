// Attraction field on CUDA: the CPU's FFT convolution (attraction_cpu.cpp)
// with cuFFT, the same kernel spectra.
#include <cufft.h>

#include <algorithm>
#include <string>

#include "pipeline/cuda_check.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/cufft_check.h"

namespace sp::halftone {

namespace {

__global__ void copy_into(const float* src, int w, int h, int src_pitch, float* dst, int dst_pitch) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) dst[size_t(y) * dst_pitch + x] = src[size_t(y) * src_pitch + x];
}

__global__ void scale_product(const float2* spectrum, const float2* kernel, size_t count, const FrameNumbers* numbers,
                              float2* out) {
  const float lambda = numbers->lambda;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const float2 a = spectrum[i], k = kernel[i];
    out[i] = make_float2(lambda * (a.x * k.x - a.y * k.y), lambda * (a.x * k.y + a.y * k.x));
  }
}

}  // namespace

AttractionGpu::~AttractionGpu() { release(); }

void AttractionGpu::release() {
  if (plans_) {
    cufftDestroy(r2c_);
    cufftDestroy(c2r_);
    plans_ = false;
  }
}

void AttractionGpu::configure(const AttractionPlan& plan, ScratchAllocator& scratch) {
  release();
  width_ = plan.width;
  height_ = plan.height;
  pw_ = plan.pw;
  ph_ = plan.ph;
  const size_t half = plan.half_size(), padded = plan.padded_size();
  kx_hat_ = scratch.allocate_array<float2>(half);
  ky_hat_ = scratch.allocate_array<float2>(half);
  SP_CUDA_CHECK(cudaMemcpy(kx_hat_, plan.kx_hat.data(), half * sizeof(float2), cudaMemcpyHostToDevice));
  SP_CUDA_CHECK(cudaMemcpy(ky_hat_, plan.ky_hat.data(), half * sizeof(float2), cudaMemcpyHostToDevice));
  padded_ = scratch.allocate_array<float>(padded);
  result_ = scratch.allocate_array<float>(padded);
  spectrum_ = scratch.allocate_array<float2>(half);
  product_ = scratch.allocate_array<float2>(half);
  SP_CUDA_CHECK(cudaMemset(padded_, 0, padded * sizeof(float)));  // the padding stays zero
  SP_CUFFT_CHECK(cufftCreate(&r2c_));
  SP_CUFFT_CHECK(cufftCreate(&c2r_));
  plans_ = true;
  size_t w1 = 0, w2 = 0;
  SP_CUFFT_CHECK(cufftSetAutoAllocation(r2c_, 0));
  SP_CUFFT_CHECK(cufftSetAutoAllocation(c2r_, 0));
  SP_CUFFT_CHECK(cufftMakePlan2d(r2c_, ph_, pw_, CUFFT_R2C, &w1));
  SP_CUFFT_CHECK(cufftMakePlan2d(c2r_, ph_, pw_, CUFFT_C2R, &w2));
  void* work = scratch.allocate(std::max<size_t>({w1, w2, 16}));
  SP_CUFFT_CHECK(cufftSetWorkArea(r2c_, work));
  SP_CUFFT_CHECK(cufftSetWorkArea(c2r_, work));
}

void AttractionGpu::compute(const float* ink, const FrameNumbers* numbers, float* fx, float* fy, cudaStream_t stream) {
  const dim3 rows((width_ + 255) / 256, height_);
  copy_into<<<rows, 256, 0, stream>>>(ink, width_, height_, width_, padded_, pw_);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUFFT_CHECK(cufftSetStream(r2c_, stream));
  SP_CUFFT_CHECK(cufftSetStream(c2r_, stream));
  SP_CUFFT_CHECK(cufftExecR2C(r2c_, padded_, reinterpret_cast<cufftComplex*>(spectrum_)));
  const size_t half = size_t(ph_) * (pw_ / 2 + 1);
  const int blocks = int(std::min<size_t>((half + 255) / 256, 4096));
  for (auto [kernel, out] : {std::pair{kx_hat_, fx}, std::pair{ky_hat_, fy}}) {
    scale_product<<<blocks, 256, 0, stream>>>(spectrum_, kernel, half, numbers, product_);
    SP_CUDA_CHECK_LAUNCH();
    SP_CUFFT_CHECK(cufftExecC2R(c2r_, reinterpret_cast<cufftComplex*>(product_), result_));
    copy_into<<<rows, 256, 0, stream>>>(result_, width_, height_, pw_, out, width_);
    SP_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace sp::halftone
