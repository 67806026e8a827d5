// Attraction field on CUDA: the CPU's FFT convolution (attraction_cpu.cpp)
// with cuFFT and the same kernel spectra (made on the device,
// kernel_spectra.cu), the 2D transforms pruned to where the data is. Of the
// ph x pw padded grid only the h x w ink block is non-zero on the way in and
// only the h x w field block is read on the way out, so the forward row
// transform runs over h rows and the inverse row transform produces h rows
// (per component) instead of ph; the column transforms stay full length
// (cuFFT does not prune within a transform). They run on transposed copies
// (column_major_spectra): as strided batches over the rows, cuFFT read two
// adjacent columns a block and ran at a fifth of the bandwidth.
//
// Zero-padding invariants, in one place:
//  * ink_rows_ columns w .. pw-1: written as zeros by spread_ink_rows every
//    frame together with the ink, so nothing relies on cuFFT leaving its
//    input alone there.
//  * column_input_ entries h .. ph-1 of each column: zeroed once in
//    configure; only read afterwards, by the out-of-place column C2C (the
//    transpose writes entries < h only). cuFFT's out-of-place C2C does not
//    write its input (only C2R is documented to); AttractionMatchesCpu's
//    second frame would see it.
#include <cufft.h>

#include <algorithm>
#include <climits>
#include <string>

#include "pipeline/cuda_check.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/cufft_check.h"
#include "stages/halftone/kernel_spectra_gpu.h"
#include "stages/halftone/transpose_gpu.h"

namespace sp::halftone {

namespace {

// ink (w x h) into rows of pw floats, zeros after column w.
__global__ void spread_ink_rows(const float* ink, int w, int h, int pw, float* rows) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < pw && y < h) rows[size_t(y) * pw + x] = x < w ? ink[size_t(y) * w + x] : 0.f;
}

// Threads along ky: in the column-major layout consecutive rows are adjacent.
__global__ void multiply_kernels(const float2* spectrum, const float2* kernel_columns, int columns, int ph,
                                 const FrameNumbers* numbers, float2* products) {
  const int ky = blockIdx.x * blockDim.x + threadIdx.x, kx = blockIdx.y;
  if (ky <= ph / 2)
    multiply_kernel_rows(spectrum, kernel_columns, column_major_spectra(columns, ph), ph, numbers->lambda, ky, kx,
                         products);
}

// Field row-pairs (2y: x, 2y + 1: y, pw floats each) into fx, fy (w x h).
__global__ void gather_fields(const float* field_rows, int w, int h, int pw, float* fx, float* fy) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  const float* row = field_rows + size_t(2 * y) * pw;
  fx[size_t(y) * w + x] = row[x];
  fy[size_t(y) * w + x] = row[pw + x];
}

// A batch of 1D transforms of length n with cuFFT's advanced layout (element
// i of transform b at base + b * dist + i * stride); the work area is shared.
size_t make_1d_plan(int plan, int n, int istride, int idist, int ostride, int odist, cufftType type, int batch) {
  int length[1] = {n}, embed[1] = {n};  // a non-null embed selects the advanced layout; ignored for rank 1
  size_t work = 0;
  SP_CUFFT_CHECK(cufftSetAutoAllocation(plan, 0));
  SP_CUFFT_CHECK(
      cufftMakePlanMany(plan, 1, length, embed, istride, idist, embed, ostride, odist, type, batch, &work));
  return work;
}

}  // namespace

AttractionGpu::~AttractionGpu() { release(); }

void AttractionGpu::release() {
  if (plans_) {
    for (int plan : {row_r2c_, column_forward_, column_inverse_, row_c2r_}) cufftDestroy(plan);
    plans_ = false;
  }
}

void AttractionGpu::configure(const AttractionPlan& plan, ScratchAllocator& scratch) {
  release();
  width_ = plan.width;
  height_ = plan.height;
  pw_ = plan.pw;
  ph_ = plan.ph;
  const int columns = pw_ / 2 + 1;
  const size_t half = plan.half_size();
  kernel_columns_ = shared_attraction_kernel_columns(plan);
  ink_rows_ = scratch.allocate_array<float>(size_t(height_) * pw_);
  row_spectra_ = scratch.allocate_array<float2>(2 * size_t(height_) * columns);
  column_input_ = scratch.allocate_array<float2>(half);
  spectrum_ = scratch.allocate_array<float2>(half);
  products_ = scratch.allocate_array<float2>(2 * half);
  // The spectrum is dead once multiplied; 2h x pw floats fit in its columns x ph complex as ph >= 2h.
  field_rows_ = reinterpret_cast<float*>(spectrum_);
  SP_CUDA_CHECK(cudaMemset(column_input_, 0, half * sizeof(float2)));  // entries >= h stay zero (see the top)

  for (int* p : {&row_r2c_, &column_forward_, &column_inverse_, &row_c2r_}) SP_CUFFT_CHECK(cufftCreate(p));
  plans_ = true;
  const size_t work = std::max<size_t>({
      make_1d_plan(row_r2c_, pw_, 1, pw_, 1, columns, CUFFT_R2C, height_),
      make_1d_plan(column_forward_, ph_, 1, ph_, 1, ph_, CUFFT_C2C, columns),
      make_1d_plan(column_inverse_, ph_, 1, ph_, 1, ph_, CUFFT_C2C, 2 * columns),
      make_1d_plan(row_c2r_, pw_, 1, columns, 1, pw_, CUFFT_C2R, 2 * height_),
      size_t(16),
  });
  void* work_area = scratch.allocate(work);
  for (int p : {row_r2c_, column_forward_, column_inverse_, row_c2r_}) SP_CUFFT_CHECK(cufftSetWorkArea(p, work_area));
}

void AttractionGpu::compute(const float* ink, const FrameNumbers* numbers, float* fx, float* fy, cudaStream_t stream) {
  const int columns = pw_ / 2 + 1;
  for (int p : {row_r2c_, column_forward_, column_inverse_, row_c2r_}) SP_CUFFT_CHECK(cufftSetStream(p, stream));
  spread_ink_rows<<<dim3((pw_ + 255) / 256, height_), 256, 0, stream>>>(ink, width_, height_, pw_, ink_rows_);
  SP_CUDA_CHECK_LAUNCH();
  auto* row_spectra = reinterpret_cast<cufftComplex*>(row_spectra_);
  auto* column_input = reinterpret_cast<cufftComplex*>(column_input_);
  auto* spectrum = reinterpret_cast<cufftComplex*>(spectrum_);
  auto* products = reinterpret_cast<cufftComplex*>(products_);
  SP_CUFFT_CHECK(cufftExecR2C(row_r2c_, ink_rows_, row_spectra));
  launch_transpose(row_spectra_, columns, 0, column_input_, ph_, 0, height_, columns, INT_MAX, stream);
  SP_CUFFT_CHECK(cufftExecC2C(column_forward_, column_input, spectrum, CUFFT_FORWARD));
  multiply_kernels<<<dim3((ph_ / 2 + 1 + 255) / 256, columns), 256, 0, stream>>>(spectrum_, kernel_columns_->data(), columns,
                                                                                   ph_, numbers, products_);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUFFT_CHECK(cufftExecC2C(column_inverse_, products, products, CUFFT_INVERSE));
  // Only the first h entries of each product column, back into rows: row y = [x | y].
  launch_transpose(products_, ph_, 0, row_spectra_, 2 * columns, 0, 2 * columns, height_, INT_MAX, stream);
  SP_CUFFT_CHECK(cufftExecC2R(row_c2r_, row_spectra, field_rows_));
  gather_fields<<<dim3((width_ + 255) / 256, height_), 256, 0, stream>>>(field_rows_, width_, height_, pw_, fx, fy);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
