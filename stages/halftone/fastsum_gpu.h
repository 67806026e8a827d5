#pragma once
// The CUDA fast summation: the same algorithm as FastsumCpu (fastsum.h) with
// cuFFT. Particle counts live on the device (they follow the frame's ink), so
// kernels loop over a fixed grid and read the count; the host never waits.
#include <cuda_runtime.h>
#include <cufft.h>

#include <memory>

#include "pipeline/scratch.h"
#include "stages/halftone/fastsum.h"

namespace sp::halftone {

// The plan's scalars and device tables, passed to kernels by value.
struct DevicePlan {
  int width = 0, height = 0, N = 0, n = 0, cells_x = 0, cells_y = 0;
  float cell_w = 0, cell_h = 0, grid_per_pixel = 0, scale = 0;
  // The particles touch only grid rows v in [-row_offset, row_offset]; the
  // spread and the interpolated field are stored as `rows` rows of n
  // (row r <-> v = r - row_offset), and the FFTs are pruned to them.
  int rows = 0, row_offset = 0;
  int spread_cells = 1;  // a spread block's tile: spread_cells x spread_cells cells
  Window window;
  NearKernel near;
  // b_j with the deconvolution, from one quadrant (shared_kernel_quadrant)
  const float2* kernel_quadrant = nullptr;
};

class DeviceSpectrum;  // kernel_spectra_gpu.h

class FastsumGpu {
 public:
  FastsumGpu() = default;
  ~FastsumGpu();
  FastsumGpu(const FastsumGpu&) = delete;
  FastsumGpu& operator=(const FastsumGpu&) = delete;

  // exact_sums: also ready the spread whose sums do not depend on the order
  // of its atomics (use_exact_sums), for results that repeat to the bit.
  void configure(const FastsumPlan& plan, int capacity, ScratchAllocator& scratch, bool exact_sums = false);
  // From the next far_field() on; only after configure(..., exact_sums = true).
  void use_exact_sums(bool on) { exact_ = on && exact_grid_ != nullptr; }
  // Stable sort by cell (ties by index, as FastsumCpu::sort): pos -> sorted,
  // and the cell table. *count is read on the device.
  void sort(const float2* pos, float2* sorted, const int* count, cudaStream_t stream);
  // `sorted` and the cell table as the last sort() left them. marks
  // (optional): events recorded after the spread and after the FFTs.
  void far_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream,
                 cudaEvent_t after_spread = nullptr, cudaEvent_t after_fft = nullptr);
  // The field of the last far_field()'s spread, interpolated at `sorted`
  // (the spread and the FFTs skipped).
  void far_field_of_last_spread(const float2* sorted, const int* count, float2* force, cudaStream_t stream);
  void add_near_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream);
  void forces(const float2* sorted, const int* count, float2* force, cudaStream_t stream) {
    far_field(sorted, count, force, stream);
    add_near_field(sorted, count, force, stream);
  }

  const int* cell_start() const { return cell_start_; }
  // The last sort's permutation: sorted[slot] = pos[sort_origin()[slot]].
  const int* sort_origin() const { return origin_; }
  const DevicePlan& device_plan() const { return dp_; }
  int particle_blocks() const { return particle_blocks_; }

 private:
  void release();
  void configure_far(const FastsumPlan& plan, ScratchAllocator& scratch, bool exact_sums);

  DevicePlan dp_;
  int capacity_ = 0;
  int particle_blocks_ = 1;
  dim3 spread_grid_;  // tiles of cells
  size_t spread_shared_bytes_ = 0;
  size_t exact_shared_bytes_ = 0;
  bool exact_ = false;
  int* cell_count_ = nullptr;  // cells + 1
  int* cell_start_ = nullptr;  // cells + 1
  int* key_ = nullptr;
  int* rank_ = nullptr;
  int* origin_ = nullptr;
  void* scan_temp_ = nullptr;
  size_t scan_bytes_ = 0;
  // Far field, pruned 2D FFTs as 1D passes (see fastsum_far.cu).
  float* grid_ = nullptr;               // rows x n spread
  unsigned long long* exact_grid_ = nullptr;  // rows x n: the exact spread's fixed-point sums
  cufftComplex* rows_hat_ = nullptr;    // rows x (n/2+1): R2C along x
  cufftComplex* cols_ = nullptr;        // N/2 x n: transposed, zero outside the rows
  cufftComplex* spectrum_ = nullptr;    // N/2 x n: C2C along y (j1 >= 0 half)
  cufftComplex* band_ = nullptr;        // N x n: multiplied band by columns (j1 + N/2)
  cufftComplex* col_field_ = nullptr;   // N x n: inverse C2C along y
  cufftComplex* rows_in_ = nullptr;     // rows x n: transposed back, zero outside the band
  cufftComplex* field_ = nullptr;       // rows x n: inverse C2C along x = Fx + i Fy
  cufftHandle fft_rows_r2c_ = 0, fft_cols_ = 0, ifft_cols_ = 0, ifft_rows_ = 0;
  bool plans_ = false;
  std::shared_ptr<const DeviceSpectrum> kernel_quadrant_;  // this device's, shared (kernel_spectra_gpu.h)
};

}  // namespace sp::halftone
