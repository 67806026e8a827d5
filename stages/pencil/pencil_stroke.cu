// Stroke branch on CUDA: median + gradient (one kernel), 8 line responses +
// argmax (one kernel), drawing convolution + sum + frame range (one kernel).
// All integer: results equal the CPU's bit for bit.
#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cuda.h"

namespace sp::pencil::gpu {

namespace {

constexpr int kPrepTile = 32;              // median/gradient: 32x32 outputs per block
constexpr int kStrokeTileW = 32;           // classify/draw: 32 columns per block...
constexpr int kRowsPerThread = 8;          // ...8 rows per thread (register window)...
constexpr int kStrokeThreadsY = 8;         // ...8 thread rows: 32x64 outputs per block
constexpr int kStrokeTileH = kRowsPerThread * kStrokeThreadsY;

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

// Loads the block's outputs plus a halo of half_length (zeros outside the frame).
__device__ void load_tile(const uint16_t* src, int w, int h, int half, uint16_t* tile, int pitch, int rows) {
  const int gx0 = blockIdx.x * kStrokeTileW - half, gy0 = blockIdx.y * kStrokeTileH - half;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
  for (int i = tid; i < pitch * rows; i += threads) {
    const int ty = i / pitch, tx = i % pitch;
    const int gx = gx0 + tx, gy = gy0 + ty;
    tile[i] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? src[size_t(gy) * w + gx] : uint16_t(0);
  }
}

struct Identity {
  __device__ uint32_t operator()(uint16_t v) const { return v; }
};
struct ClassMask {
  int direction;
  __device__ uint32_t operator()(uint16_t v) const { return masked_gradient(v, direction); }
};

// acc[r] += sum over direction d's taps of w * f(tile[row0 + r + dy][col + dx]).
// Each kernel column is a run of dy: a sliding window of kRowsPerThread values
// in registers serves all the thread's rows, one shared load per tap row.
template <class Fn>
__device__ void accumulate_direction(const uint16_t* tile, int pitch, int col, int row0,
                                     const DeviceLineKernels& k, int d, uint32_t (&acc)[kRowsPerThread], Fn f) {
  for (int i = k.begin[d]; i < k.begin[d + 1]; ++i) {
    const LineRun run = k.runs[i];
    const uint16_t* src = tile + (row0 + run.lo) * pitch + col + run.dx;
    const uint8_t* weights = k.weights + run.offset;
    uint32_t window[kRowsPerThread];
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) window[r] = f(src[r * pitch]);
    for (int j = 0; j < run.len; ++j) {
      const uint32_t wj = weights[j];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) acc[r] += wj * window[r];
      if (j + 1 < run.len) {
#pragma unroll
        for (int r = 0; r + 1 < kRowsPerThread; ++r) window[r] = window[r + 1];
        window[kRowsPerThread - 1] = f(src[(j + kRowsPerThread) * pitch]);
      }
    }
  }
}

__global__ void classify_kernel(const uint16_t* gradient, int w, int h, DeviceLineKernels k, uint16_t* classified) {
  extern __shared__ uint16_t tile[];
  const int half = k.half_length, pitch = kStrokeTileW + 2 * half, rows = kStrokeTileH + 2 * half;
  load_tile(gradient, w, h, half, tile, pitch, rows);
  __syncthreads();
  const int col = half + threadIdx.x, row0 = half + threadIdx.y * kRowsPerThread;
  uint32_t best[kRowsPerThread] = {};
  int best_direction[kRowsPerThread] = {};
  for (int d = 0; d < kDirections; ++d) {
    uint32_t acc[kRowsPerThread];
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) acc[r] = 0;
    accumulate_direction(tile, pitch, col, row0, k, d, acc, Identity{});
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      if (d == 0 || acc[r] > best[r]) {  // ties keep the lowest direction, as on the CPU
        best[r] = acc[r];
        best_direction[r] = d;
      }
    }
  }
  const int x = blockIdx.x * kStrokeTileW + threadIdx.x;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = blockIdx.y * kStrokeTileH + threadIdx.y * kRowsPerThread + r;
    if (x < w && y < h) classified[size_t(y) * w + x] = pack_classified(tile[(row0 + r) * pitch + col], best_direction[r]);
  }
}

__global__ void draw_kernel(const uint16_t* classified, int w, int h, DeviceLineKernels k, uint32_t* sp,
                            uint32_t* range) {
  extern __shared__ uint16_t tile[];
  const int half = k.half_length, pitch = kStrokeTileW + 2 * half, rows = kStrokeTileH + 2 * half;
  load_tile(classified, w, h, half, tile, pitch, rows);
  __syncthreads();
  const int col = half + threadIdx.x, row0 = half + threadIdx.y * kRowsPerThread;
  uint32_t acc[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) acc[r] = 0;
  for (int d = 0; d < kDirections; ++d) accumulate_direction(tile, pitch, col, row0, k, d, acc, ClassMask{d});
  uint32_t lo = 0xFFFFFFFFu, hi = 0;
  const int x = blockIdx.x * kStrokeTileW + threadIdx.x;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = blockIdx.y * kStrokeTileH + threadIdx.y * kRowsPerThread + r;
    if (x < w && y < h) {
      sp[size_t(y) * w + x] = acc[r];
      lo = min(lo, acc[r]);
      hi = max(hi, acc[r]);
    }
  }
  lo = __reduce_min_sync(0xFFFFFFFFu, lo);
  hi = __reduce_max_sync(0xFFFFFFFFu, hi);
  if (threadIdx.x == 0) {
    atomicMax(&range[0], ~lo);
    atomicMax(&range[1], hi);
  }
}

size_t stroke_shared_bytes(int half_length) {
  return size_t(kStrokeTileW + 2 * half_length) * (kStrokeTileH + 2 * half_length) * sizeof(uint16_t);
}

dim3 stroke_grid(int w, int h) {
  return dim3((w + kStrokeTileW - 1) / kStrokeTileW, (h + kStrokeTileH - 1) / kStrokeTileH);
}

}  // namespace

void prepare_stroke_kernels(int half_length) {
  const int bytes = int(stroke_shared_bytes(half_length));
  SP_CUDA_CHECK(cudaFuncSetAttribute(classify_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  SP_CUDA_CHECK(cudaFuncSetAttribute(draw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

void launch_median_gradient(const RgbaView& in, GradientForm form, uint16_t* gradient, cudaStream_t stream) {
  const dim3 grid((in.width + kPrepTile - 1) / kPrepTile, (in.height + kPrepTile - 1) / kPrepTile);
  median_gradient_kernel<<<grid, dim3(kPrepTile, 8), 0, stream>>>(in, form, gradient);
  SP_CUDA_CHECK_LAUNCH();
}

void launch_classify(const uint16_t* gradient, int w, int h, const DeviceLineKernels& k, uint16_t* classified,
                     cudaStream_t stream) {
  classify_kernel<<<stroke_grid(w, h), dim3(kStrokeTileW, kStrokeThreadsY), stroke_shared_bytes(k.half_length),
                    stream>>>(gradient, w, h, k, classified);
  SP_CUDA_CHECK_LAUNCH();
}

void launch_draw(const uint16_t* classified, int w, int h, const DeviceLineKernels& k, uint32_t* sp,
                 uint32_t* range, cudaStream_t stream) {
  draw_kernel<<<stroke_grid(w, h), dim3(kStrokeTileW, kStrokeThreadsY), stroke_shared_bytes(k.half_length),
                stream>>>(classified, w, h, k, sp, range);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::pencil::gpu
