#pragma once
// The attraction field F_A(x) = lambda * sum_y ink(y) (y - x) / |y - x|^2 at
// the pixel centres, as one FFT convolution per frame on a zero-padded grid
// (linear, not circular); the particles sample it bilinearly.
#include <complex>
#include <vector>

#include "pipeline/cuda_handles.h"
#include "pipeline/image.h"
#include "pipeline/scratch.h"
#include "stages/halftone/halftone_math.h"

namespace sp::halftone {

struct AttractionPlan {
  int width = 0, height = 0;
  int pw = 0, ph = 0;  // padded grid (>= 2 w, 2 h)
  // Half spectra (ph x (pw/2+1)) of -G_x and -G_y, divided by pw * ph.
  std::vector<std::complex<float>> kx_hat, ky_hat;
  size_t half_size() const { return size_t(ph) * (pw / 2 + 1); }
  size_t padded_size() const { return size_t(ph) * pw; }
};

AttractionPlan make_attraction_plan(int width, int height);
// make_attraction_plan's result, made once for concurrent and recent callers.
AttractionPlan shared_attraction_plan(int width, int height);

// Float64 oracle at one pixel centre (x, y), lambda = 1.
void direct_attraction(const float* ink, int w, int h, int x, int y, double& fx, double& fy);

class AttractionCpu {
 public:
  explicit AttractionCpu(const AttractionPlan& plan);
  ~AttractionCpu();
  AttractionCpu(const AttractionCpu&) = delete;
  AttractionCpu& operator=(const AttractionCpu&) = delete;
  // fx, fy: width x height.
  void compute(const float* ink, float lambda, float* fx, float* fy);

 private:
  const AttractionPlan& plan_;
  float* padded_ = nullptr;
  std::complex<float>* spectrum_ = nullptr;
  std::complex<float>* product_ = nullptr;
  float* result_ = nullptr;
  void* r2c_ = nullptr;
  void* c2r_ = nullptr;
};

// The same on CUDA (cuFFT; attraction.cu, CUDA builds only); lambda is read from the device's FrameNumbers.
class AttractionGpu {
 public:
  AttractionGpu() = default;
  ~AttractionGpu();
  AttractionGpu(const AttractionGpu&) = delete;
  AttractionGpu& operator=(const AttractionGpu&) = delete;
  void configure(const AttractionPlan& plan, ScratchAllocator& scratch);
  void compute(const float* ink, const FrameNumbers* numbers, float* fx, float* fy, cudaStream_t stream);

 private:
  void release();
  int width_ = 0, height_ = 0, pw_ = 0, ph_ = 0;
  float2* kx_hat_ = nullptr;
  float2* ky_hat_ = nullptr;
  float* padded_ = nullptr;
  float2* spectrum_ = nullptr;
  float2* product_ = nullptr;
  float* result_ = nullptr;
  int r2c_ = 0, c2r_ = 0;  // cufftHandle
  bool plans_ = false;
};

}  // namespace sp::halftone
