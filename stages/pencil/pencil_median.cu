// Stroke branch, first step on CUDA: luma, 3x3 median and forward-difference
// gradient in one kernel (integer arithmetic: equal to the CPU bit for bit).
#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cuda.h"

namespace sp::pencil::gpu {

namespace {

constexpr int kPrepTile = 32;  // median/gradient: 32x32 outputs per block

__global__ void median_gradient_kernel(RgbaView in, GradientForm form, uint16_t* gradient) {
  constexpr int kLuma = kPrepTile + 3;    // pixels x0-1 .. x0+33
  constexpr int kMedian = kPrepTile + 1;  // medians x0 .. x0+32 (the gradient looks one ahead)
  __shared__ uint8_t luma[kLuma][kLuma + 1];
  __shared__ uint8_t median[kMedian][kMedian + 3];
  const int w = in.width, h = in.height;
  const int x0 = blockIdx.x * kPrepTile, y0 = blockIdx.y * kPrepTile;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
  for (int i = tid; i < kLuma * kLuma; i += threads) {
    const int ly = i / kLuma, lx = i % kLuma;
    const int gx = iclamp(x0 - 1 + lx, 0, w - 1), gy = iclamp(y0 - 1 + ly, 0, h - 1);  // edges replicated
    luma[ly][lx] = uint8_t(luma8_rgba(in.row32(gy)[gx]));
  }
  __syncthreads();
  for (int i = tid; i < kMedian * kMedian; i += threads) {
    const int my = i / kMedian, mx = i % kMedian;
    median[my][mx] = uint8_t(median9(luma[my][mx], luma[my][mx + 1], luma[my][mx + 2], luma[my + 1][mx],
                                     luma[my + 1][mx + 1], luma[my + 1][mx + 2], luma[my + 2][mx],
                                     luma[my + 2][mx + 1], luma[my + 2][mx + 2]));
  }
  __syncthreads();
  for (int ty = threadIdx.y; ty < kPrepTile; ty += blockDim.y) {
    const int tx = threadIdx.x, x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= h) continue;
    const int c = median[ty][tx];
    const int dx = x + 1 < w ? c - median[ty][tx + 1] : 0;
    const int dy = y + 1 < h ? c - median[ty + 1][tx] : 0;
    gradient[size_t(y) * w + x] = uint16_t(form == GradientForm::l1 ? gradient_l1(dx, dy) : gradient_l2(dx, dy));
  }
}

}  // namespace

void launch_median_gradient(const RgbaView& in, GradientForm form, uint16_t* gradient, cudaStream_t stream) {
  const dim3 grid((in.width + kPrepTile - 1) / kPrepTile, (in.height + kPrepTile - 1) / kPrepTile);
  median_gradient_kernel<<<grid, dim3(kPrepTile, 8), 0, stream>>>(in, form, gradient);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::pencil::gpu
