// CUDA side of the scale stage: one thread per output pixel, 4-byte pixel
// loads and stores, taps shared per block (all arithmetic in scale_math.h).
#include "pipeline/cuda_check.h"
#include "stages/scale/scale.h"

namespace sp {

using namespace scale_detail;

namespace {

// 32 columns x 8 rows: a warp covers 128 contiguous output bytes of one row.
constexpr int kBlockW = 32;
constexpr int kBlockH = 8;

// A tap depends only on the output column (or row), and computing one costs
// integer divisions: each block computes its 32 column taps and 8 row taps
// once and shares them instead of every thread redoing both.
template <class Filter>
__global__ void __launch_bounds__(kBlockW* kBlockH) scale_kernel(RgbaView in, RgbaView out, Filter filter) {
  using Tap = typename Filter::Tap;
  __shared__ Tap x_taps[kBlockW];
  __shared__ Tap y_taps[kBlockH];
  const int x = blockIdx.x * kBlockW + threadIdx.x;
  const int y = blockIdx.y * kBlockH + threadIdx.y;
  // Clamped so edge blocks compute valid (unused) taps; every thread reaches the barrier.
  if (threadIdx.y == 0) x_taps[threadIdx.x] = filter.x_tap(min(x, out.width - 1));
  if (threadIdx.y == 1 && threadIdx.x < kBlockH)
    y_taps[threadIdx.x] = filter.y_tap(min(int(blockIdx.y) * kBlockH + int(threadIdx.x), out.height - 1));
  __syncthreads();
  if (x >= out.width || y >= out.height) return;
  out.row32(y)[x] = filter.pixel(in, x_taps[threadIdx.x], y_taps[threadIdx.y]);
}

}  // namespace

void ScaleStage::process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo&, cudaStream_t stream) {
  check_views(in, out);
  if (identity()) {
    if (in.data == out.data) return;
    SP_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, size_t(out.width) * 4, size_t(out.height),
                                    cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const dim3 block(kBlockW, kBlockH);
  const dim3 grid((out.width + kBlockW - 1) / kBlockW, (out.height + kBlockH - 1) / kBlockH);
  visit_filter(settings_.filter, input_, output_, [&](const auto& filter) {
    scale_kernel<<<grid, block, 0, stream>>>(in, out, filter);
    SP_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace sp
