#pragma once
// The CUDA fast summation: the same algorithm as FastsumCpu (fastsum.h) with
// cuFFT. Particle counts live on the device (they follow the frame's ink), so
// kernels loop over a fixed grid and read the count; the host never waits.
#include <cuda_runtime.h>
#include <cufft.h>

#include "pipeline/scratch.h"
#include "stages/halftone/fastsum.h"

namespace sp::halftone {

// The plan's scalars and device tables, passed to kernels by value.
struct DevicePlan {
  int width = 0, height = 0, N = 0, n = 0, cells_x = 0, cells_y = 0;
  float cell_w = 0, cell_h = 0, grid_per_pixel = 0, scale = 0;
  Window window;
  NearKernel near;
  const float2* kernel_hat = nullptr;  // N x N (x + i y)
  const float* deconv = nullptr;       // N
};

class FastsumGpu {
 public:
  FastsumGpu() = default;
  ~FastsumGpu();
  FastsumGpu(const FastsumGpu&) = delete;
  FastsumGpu& operator=(const FastsumGpu&) = delete;

  void configure(const FastsumPlan& plan, int capacity, ScratchAllocator& scratch);
  // Stable sort by cell (ties by index, as FastsumCpu::sort): pos -> sorted,
  // and the cell table. *count is read on the device.
  void sort(const float2* pos, float2* sorted, const int* count, cudaStream_t stream);
  // marks (optional): events recorded after the spread and after the FFTs.
  void far_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream,
                 cudaEvent_t after_spread = nullptr, cudaEvent_t after_fft = nullptr);
  void add_near_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream);
  void forces(const float2* sorted, const int* count, float2* force, cudaStream_t stream) {
    far_field(sorted, count, force, stream);
    add_near_field(sorted, count, force, stream);
  }

  const int* cell_start() const { return cell_start_; }
  const DevicePlan& device_plan() const { return dp_; }
  int particle_blocks() const { return particle_blocks_; }

 private:
  void release();

  DevicePlan dp_;
  int capacity_ = 0;
  int particle_blocks_ = 1;
  int* cell_count_ = nullptr;  // cells + 1
  int* cell_start_ = nullptr;  // cells + 1
  int* key_ = nullptr;
  int* rank_ = nullptr;
  int* origin_ = nullptr;
  void* scan_temp_ = nullptr;
  size_t scan_bytes_ = 0;
  float* grid_ = nullptr;
  cufftComplex* half_ = nullptr;
  cufftComplex* band_ = nullptr;
  cufftComplex* field_ = nullptr;
  cufftHandle r2c_ = 0, c2c_ = 0;
  bool plans_ = false;
};

}  // namespace sp::halftone
