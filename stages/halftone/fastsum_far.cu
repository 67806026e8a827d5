// CUDA far field: spread (B^T, global atomics in cell order), the 2D FFTs as
// pruned 1D passes, the band multiply with the window's deconvolution on the
// fly (D), interpolation (B).
//
// Only rows v in [-a, a] of the n x n torus grid hold particles (a = row_offset,
// the image's height in grid units plus the window), and only |j| < N/2 of
// the spectrum is used. So the forward transform is an R2C along x of the
// `rows` non-zero rows, a transpose of the N/2 kept columns, and a C2C along
// y; the inverse is a C2C along y of the N band columns, a transpose of the
// `rows` needed rows, and a C2C along x. With sigma = 2 this moves about a
// third of the data of two full n x n transforms.
#include <cufft.h>

#include <algorithm>
#include <climits>
#include <string>

#include "pipeline/cuda_check.h"
#include "stages/halftone/cufft_check.h"
#include "stages/halftone/fastsum_gpu.h"

namespace sp::halftone {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;

__device__ __forceinline__ int wrap_once(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

// Spread (B^T). Particles are sorted by cell, so a block's chunk of (up to)
// 512 consecutive particles covers a short strip of the grid: it accumulates the
// chunk in a shared-memory tile and adds the tile to the grid with one global
// atomic per touched point (cuFINUFFT's "SM" scheme). Chunks whose strip does
// not fit (a chunk crossing cell rows) use global atomics directly.
constexpr int kSpreadChunk = 512;  // largest chunk; small sets use smaller ones to fill the GPU
constexpr int kTileFloats = 12000;  // 47 KB (static shared memory stops at 48 KB)

__global__ void __launch_bounds__(kThreads) spread(const float2* pos, const int* count, DevicePlan p, float* grid) {
  __shared__ float tile[kTileFloats];
  __shared__ int box[4];  // min x, max x, min y, max y of the first grid indices
  const int m = *count, m2 = 2 * p.window.m, n = p.n;
  const float cx = 0.5f * p.width, cy = 0.5f * p.height;
  const int chunk = p.spread_chunk;
  for (int begin = blockIdx.x * chunk; begin < m; begin += gridDim.x * chunk) {
    const int end = min(begin + chunk, m);
    if (threadIdx.x == 0) box[0] = box[2] = INT_MAX, box[1] = box[3] = INT_MIN;
    __syncthreads();
    int lx = INT_MAX, hx = INT_MIN, ly = INT_MAX, hy = INT_MIN;
    for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const int fx = int(floorf((pos[i].x - cx) * p.grid_per_pixel)), fy = int(floorf((pos[i].y - cy) * p.grid_per_pixel));
      lx = min(lx, fx), hx = max(hx, fx), ly = min(ly, fy), hy = max(hy, fy);
    }
    atomicMin(&box[0], lx), atomicMax(&box[1], hx), atomicMin(&box[2], ly), atomicMax(&box[3], hy);
    __syncthreads();
    const int x0 = box[0] - p.window.m + 1, y0 = box[2] - p.window.m + 1;
    const int bw = box[1] - box[0] + m2, bh = box[3] - box[2] + m2;
    const bool tiled = bw * bh <= kTileFloats;
    if (tiled)
      for (int e = threadIdx.x; e < bw * bh; e += blockDim.x) tile[e] = 0.f;
    __syncthreads();
    for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {
      float wx[2 * kMaxCutoff], wy[2 * kMaxCutoff];
      const int fx = window_weights(p.window, (pos[i].x - cx) * p.grid_per_pixel, wx);
      const int fy = window_weights(p.window, (pos[i].y - cy) * p.grid_per_pixel, wy);
      for (int k = 0; k < m2; ++k) {
        if (tiled) {
          float* row = tile + (fy + k - y0) * bw + (fx - x0);
          for (int j = 0; j < m2; ++j) atomicAdd(row + j, wy[k] * wx[j]);
        } else {
          float* row = grid + size_t(fy + k + p.row_offset) * n;
          for (int j = 0; j < m2; ++j) atomicAdd(row + wrap_once(fx + j, n), wy[k] * wx[j]);
        }
      }
    }
    __syncthreads();
    if (tiled)
      for (int e = threadIdx.x; e < bw * bh; e += blockDim.x) {
        const float v = tile[e];
        if (v != 0.f) atomicAdd(grid + size_t(y0 + e / bw + p.row_offset) * n + wrap_once(x0 + e % bw, n), v);
      }
    __syncthreads();  // the next chunk reuses box and tile
  }
}

// dst[x * dst_pitch + wrap(y + dst_shift)] = src[y * src_pitch + wrap(x + src_shift)]
// for y < rows, x < cols: a tiled transpose with index shifts on the torus.
__global__ void transpose(const cufftComplex* src, int src_pitch, int src_shift, cufftComplex* dst, int dst_pitch,
                          int dst_shift, int rows, int cols, int n) {
  __shared__ cufftComplex tile[kTile][kTile + 1];
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  for (int dy = threadIdx.y; dy < kTile; dy += blockDim.y) {
    const int x = x0 + threadIdx.x, y = y0 + dy;
    if (x < cols && y < rows) tile[dy][threadIdx.x] = src[size_t(y) * src_pitch + wrap_once(x + src_shift, n)];
  }
  __syncthreads();
  for (int dx = threadIdx.y; dx < kTile; dx += blockDim.y) {
    const int y = y0 + threadIdx.x, x = x0 + dx;
    if (x < cols && y < rows) dst[size_t(x) * dst_pitch + wrap_once(y + dst_shift, n)] = tile[threadIdx.x][dx];
  }
}

// band[(j1 + N/2) * n + wrap(j2)] = G_j b_j / (c_j1 c_j2)^2 for |j| < N/2,
// G from the j1 >= 0 half (spectrum[j1 * n + wrap(j2)]) by Hermitian symmetry.
__global__ void multiply_band(const cufftComplex* spectrum, DevicePlan p, cufftComplex* band) {
  const int N = p.N, n = p.n;
  const int j2 = int(blockIdx.x * blockDim.x + threadIdx.x) - N / 2 + 1;
  const int j1 = int(blockIdx.y) - N / 2 + 1;
  if (j2 >= N / 2) return;
  cufftComplex g;
  if (j1 >= 0) {
    g = spectrum[size_t(j1) * n + wrap_once(j2, n)];
  } else {
    g = spectrum[size_t(-j1) * n + wrap_once(-j2, n)];
    g.y = -g.y;
  }
  const float2 b = p.kernel_hat[size_t(j1 + N / 2) * N + j2 + N / 2];
  const float d = p.deconv[j1 + N / 2] * p.deconv[j2 + N / 2];
  const float br = b.x * d, bi = b.y * d;
  band[size_t(j1 + N / 2) * n + wrap_once(j2, n)] = make_float2(g.x * br - g.y * bi, g.x * bi + g.y * br);
}

__global__ void interpolate(const float2* pos, const int* count, DevicePlan p, const cufftComplex* field,
                            float2* force) {
  const int m = *count, m2 = 2 * p.window.m, n = p.n;
  const float cx = 0.5f * p.width, cy = 0.5f * p.height;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    float wx[2 * kMaxCutoff], wy[2 * kMaxCutoff];
    const int fx = window_weights(p.window, (pos[i].x - cx) * p.grid_per_pixel, wx);
    const int fy = window_weights(p.window, (pos[i].y - cy) * p.grid_per_pixel, wy);
    float ax = 0.f, ay = 0.f;
    for (int k = 0; k < m2; ++k) {
      const cufftComplex* row = field + size_t(fy + k + p.row_offset) * n;
      float rx = 0.f, ry = 0.f;
      for (int j = 0; j < m2; ++j) {
        const cufftComplex f = row[wrap_once(fx + j, n)];
        rx += wx[j] * f.x;
        ry += wx[j] * f.y;
      }
      ax += wy[k] * rx;
      ay += wy[k] * ry;
    }
    force[i] = make_float2(p.scale * ax, p.scale * ay);
  }
}

cufftHandle make_plan(int n, int batch, cufftType type, size_t& work) {
  cufftHandle h = 0;
  SP_CUFFT_CHECK(cufftCreate(&h));
  SP_CUFFT_CHECK(cufftSetAutoAllocation(h, 0));
  int len = n;
  size_t bytes = 0;
  SP_CUFFT_CHECK(cufftMakePlanMany(h, 1, &len, nullptr, 1, 0, nullptr, 1, 0, type, batch, &bytes));
  work = std::max(work, bytes);
  return h;
}

void launch_transpose(const cufftComplex* src, int src_pitch, int src_shift, cufftComplex* dst, int dst_pitch,
                      int dst_shift, int rows, int cols, int n, cudaStream_t stream) {
  const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
  transpose<<<grid, dim3(kTile, 8), 0, stream>>>(src, src_pitch, src_shift, dst, dst_pitch, dst_shift, rows, cols, n);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace

void FastsumGpu::configure_far(const FastsumPlan& plan, ScratchAllocator& scratch) {
  const int N = plan.N, n = plan.n, m = plan.window.m;
  // Rows the spread can touch: |v| <= height/2 * grid_per_pixel + m (+ margin for rounding).
  dp_.row_offset = std::min(n / 2 - 1, int(std::ceil(0.5 * plan.height * plan.grid_per_pixel)) + m + 2);
  dp_.rows = 2 * dp_.row_offset + 1;
  int sms = 0, device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  dp_.spread_chunk = kSpreadChunk;
  while (dp_.spread_chunk > 64 && capacity_ / dp_.spread_chunk < 2 * sms) dp_.spread_chunk /= 2;
  spread_blocks_ = std::max(1, std::min((capacity_ + dp_.spread_chunk - 1) / dp_.spread_chunk, sms * 4));
  const size_t rows = size_t(dp_.rows), hw = size_t(n / 2 + 1), nn = size_t(n);
  std::vector<std::complex<float>> transposed(size_t(N) * N);
  for (int a = 0; a < N; ++a)
    for (int b = 0; b < N; ++b) transposed[size_t(b) * N + a] = plan.kernel_hat[size_t(a) * N + b];
  auto* hat = scratch.allocate_array<float2>(transposed.size());
  SP_CUDA_CHECK(cudaMemcpy(hat, transposed.data(), transposed.size() * sizeof(float2), cudaMemcpyHostToDevice));
  auto* deconv = scratch.allocate_array<float>(plan.deconv.size());
  SP_CUDA_CHECK(cudaMemcpy(deconv, plan.deconv.data(), plan.deconv.size() * sizeof(float), cudaMemcpyHostToDevice));
  dp_.kernel_hat = hat;
  dp_.deconv = deconv;

  grid_ = scratch.allocate_array<float>(rows * nn);
  rows_hat_ = scratch.allocate_array<cufftComplex>(rows * hw);
  cols_ = scratch.allocate_array<cufftComplex>(size_t(N / 2) * nn);
  spectrum_ = scratch.allocate_array<cufftComplex>(size_t(N / 2) * nn);
  band_ = scratch.allocate_array<cufftComplex>(size_t(N) * nn);
  col_field_ = scratch.allocate_array<cufftComplex>(size_t(N) * nn);
  rows_in_ = scratch.allocate_array<cufftComplex>(rows * nn);
  field_ = scratch.allocate_array<cufftComplex>(rows * nn);
  // Entries the per-iteration kernels never write stay zero.
  SP_CUDA_CHECK(cudaMemset(cols_, 0, size_t(N / 2) * nn * sizeof(cufftComplex)));
  SP_CUDA_CHECK(cudaMemset(band_, 0, size_t(N) * nn * sizeof(cufftComplex)));
  SP_CUDA_CHECK(cudaMemset(rows_in_, 0, rows * nn * sizeof(cufftComplex)));
  size_t work = 16;
  fft_rows_r2c_ = make_plan(n, dp_.rows, CUFFT_R2C, work);
  fft_cols_ = make_plan(n, N / 2, CUFFT_C2C, work);
  ifft_cols_ = make_plan(n, N, CUFFT_C2C, work);
  ifft_rows_ = make_plan(n, dp_.rows, CUFFT_C2C, work);
  plans_ = true;
  void* area = scratch.allocate(work);  // the passes run one after another
  for (cufftHandle h : {fft_rows_r2c_, fft_cols_, ifft_cols_, ifft_rows_}) SP_CUFFT_CHECK(cufftSetWorkArea(h, area));
}

void FastsumGpu::far_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream,
                           cudaEvent_t after_spread, cudaEvent_t after_fft) {
  const int n = dp_.n, N = dp_.N, rows = dp_.rows, a = dp_.row_offset;
  SP_CUDA_CHECK(cudaMemsetAsync(grid_, 0, size_t(rows) * n * sizeof(float), stream));
  spread<<<spread_blocks_, kThreads, 0, stream>>>(sorted, count, dp_, grid_);
  SP_CUDA_CHECK_LAUNCH();
  if (after_spread) SP_CUDA_CHECK(cudaEventRecord(after_spread, stream));
  for (cufftHandle h : {fft_rows_r2c_, fft_cols_, ifft_cols_, ifft_rows_}) SP_CUFFT_CHECK(cufftSetStream(h, stream));
  // Forward: rows along x, keep j1 in [0, N/2), columns along y.
  SP_CUFFT_CHECK(cufftExecR2C(fft_rows_r2c_, grid_, rows_hat_));
  launch_transpose(rows_hat_, n / 2 + 1, 0, cols_, n, -a, rows, N / 2, n, stream);
  SP_CUFFT_CHECK(cufftExecC2C(fft_cols_, cols_, spectrum_, CUFFT_FORWARD));
  const dim3 grid((N - 1 + kThreads - 1) / kThreads, N - 1);
  multiply_band<<<grid, kThreads, 0, stream>>>(spectrum_, dp_, band_);
  SP_CUDA_CHECK_LAUNCH();
  // Inverse: band columns along y, the particles' rows back, rows along x.
  SP_CUFFT_CHECK(cufftExecC2C(ifft_cols_, band_, col_field_, CUFFT_INVERSE));
  launch_transpose(col_field_, n, -a, rows_in_, n, -N / 2, N, rows, n, stream);
  SP_CUFFT_CHECK(cufftExecC2C(ifft_rows_, rows_in_, field_, CUFFT_INVERSE));
  if (after_fft) SP_CUDA_CHECK(cudaEventRecord(after_fft, stream));
  interpolate<<<particle_blocks_, kThreads, 0, stream>>>(sorted, count, dp_, field_, force);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
