// CUDA fast summation kernels: counting sort by cell, spread (B^T) with
// global atomics in sorted order, cuFFT R2C, band multiply with the window's
// deconvolution on the fly (D), cuFFT C2C, interpolation (B), near field.
#include <cub/device/device_scan.cuh>

#include "pipeline/cuda_check.h"
#include "stages/halftone/fastsum_gpu.h"

namespace sp::halftone {

namespace {

constexpr int kThreads = 256;

#define SP_CUFFT_CHECK(expr)                                                                         \
  do {                                                                                               \
    const cufftResult r_ = (expr);                                                                   \
    if (r_ != CUFFT_SUCCESS)                                                                         \
      throw Error(ExitCode::internal, std::string("cuFFT error ") + std::to_string(int(r_)) + ": " #expr); \
  } while (0)

__device__ __forceinline__ int wrap_once(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

__global__ void count_cells(const float2* pos, const int* count, DevicePlan p, int* key, int* rank, int* cell_count) {
  const int m = *count;
  const float icw = 1.f / p.cell_w, ich = 1.f / p.cell_h;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    const int k = cell_of(pos[i].x, pos[i].y, p.cells_x, p.cells_y, icw, ich);
    key[i] = k;
    rank[i] = atomicAdd(&cell_count[k], 1);
  }
}

__global__ void scatter_cells(const float2* pos, const int* count, const int* key, const int* rank,
                              const int* cell_start, float2* sorted, int* origin) {
  const int m = *count;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    const int slot = cell_start[key[i]] + rank[i];
    sorted[slot] = pos[i];
    origin[slot] = i;
  }
}

// Atomic ranks are in arrival order: restore index order within each cell
// (cells hold a handful of dots), so the result equals the CPU's stable sort.
__global__ void order_cells(const int* cell_start, int cells, float2* sorted, int* origin) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cells) return;
  const int lo = cell_start[c], hi = cell_start[c + 1];
  for (int i = lo + 1; i < hi; ++i) {
    const int o = origin[i];
    const float2 v = sorted[i];
    int j = i - 1;
    while (j >= lo && origin[j] > o) {
      origin[j + 1] = origin[j];
      sorted[j + 1] = sorted[j];
      --j;
    }
    origin[j + 1] = o;
    sorted[j + 1] = v;
  }
}

__global__ void spread(const float2* pos, const int* count, DevicePlan p, float* grid) {
  const int m = *count, m2 = 2 * p.window.m, n = p.n;
  const float cx = 0.5f * p.width, cy = 0.5f * p.height;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    float wx[2 * kMaxCutoff], wy[2 * kMaxCutoff];
    const int fx = window_weights(p.window, (pos[i].x - cx) * p.grid_per_pixel, wx);
    const int fy = window_weights(p.window, (pos[i].y - cy) * p.grid_per_pixel, wy);
    for (int k = 0; k < m2; ++k) {
      float* row = grid + size_t(wrap_once(fy + k, n)) * n;
      for (int j = 0; j < m2; ++j) atomicAdd(row + wrap_once(fx + j, n), wy[k] * wx[j]);
    }
  }
}

__global__ void multiply_band(const cufftComplex* half, DevicePlan p, cufftComplex* band) {
  const int N = p.N, n = p.n, hw = n / 2 + 1;
  const int j1 = int(blockIdx.x * blockDim.x + threadIdx.x) - N / 2 + 1;
  const int j2 = int(blockIdx.y) - N / 2 + 1;
  if (j1 >= N / 2) return;
  cufftComplex g;
  if (j1 >= 0) {
    g = half[size_t(wrap_once(j2, n)) * hw + j1];
  } else {
    g = half[size_t(wrap_once(-j2, n)) * hw - j1];
    g.y = -g.y;
  }
  const float2 b = p.kernel_hat[size_t(j2 + N / 2) * N + j1 + N / 2];
  const float d = p.deconv[j1 + N / 2] * p.deconv[j2 + N / 2];
  const float br = b.x * d, bi = b.y * d;
  band[size_t(wrap_once(j2, n)) * n + wrap_once(j1, n)] = make_float2(g.x * br - g.y * bi, g.x * bi + g.y * br);
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
      const cufftComplex* row = field + size_t(wrap_once(fy + k, n)) * n;
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

__global__ void near_field(const float2* pos, const int* count, DevicePlan p, const int* cell_start, float2* force) {
  const int m = *count;
  const float icw = 1.f / p.cell_w, ich = 1.f / p.cell_h;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    const float2 me = pos[i];
    const int c = cell_of(me.x, me.y, p.cells_x, p.cells_y, icw, ich);
    const int cx = c % p.cells_x, cy = c / p.cells_x;
    float fx = 0.f, fy = 0.f;
    for (int y = max(cy - 1, 0); y <= min(cy + 1, p.cells_y - 1); ++y) {
      const int row = y * p.cells_x;
      const int lo = cell_start[row + max(cx - 1, 0)], hi = cell_start[row + min(cx + 1, p.cells_x - 1) + 1];
      for (int j = lo; j < hi; ++j)
        if (j != i) near_correction(p.near, me.x - pos[j].x, me.y - pos[j].y, fx, fy);
    }
    force[i].x += fx;
    force[i].y += fy;
  }
}

}  // namespace

FastsumGpu::~FastsumGpu() { release(); }

void FastsumGpu::release() {
  if (plans_) {
    cufftDestroy(r2c_);
    cufftDestroy(c2c_);
    plans_ = false;
  }
}

void FastsumGpu::configure(const FastsumPlan& plan, int capacity, ScratchAllocator& scratch) {
  release();
  capacity_ = capacity;
  dp_ = {};
  dp_.width = plan.width;
  dp_.height = plan.height;
  dp_.N = plan.N;
  dp_.n = plan.n;
  dp_.cells_x = plan.cells_x;
  dp_.cells_y = plan.cells_y;
  dp_.cell_w = plan.cell_w;
  dp_.cell_h = plan.cell_h;
  dp_.grid_per_pixel = plan.grid_per_pixel;
  dp_.scale = float(plan.scale);
  dp_.window = plan.window;
  dp_.near = plan.near;
  auto* hat = scratch.allocate_array<float2>(plan.kernel_hat.size());
  SP_CUDA_CHECK(cudaMemcpy(hat, plan.kernel_hat.data(), plan.kernel_hat.size() * sizeof(float2), cudaMemcpyHostToDevice));
  auto* deconv = scratch.allocate_array<float>(plan.deconv.size());
  SP_CUDA_CHECK(cudaMemcpy(deconv, plan.deconv.data(), plan.deconv.size() * sizeof(float), cudaMemcpyHostToDevice));
  dp_.kernel_hat = hat;
  dp_.deconv = deconv;

  int sms = 0, device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  particle_blocks_ = std::max(1, std::min((capacity + kThreads - 1) / kThreads, sms * 8));

  const size_t cells = size_t(plan.cells()) + 1;
  cell_count_ = scratch.allocate_array<int>(cells);
  cell_start_ = scratch.allocate_array<int>(cells);
  key_ = scratch.allocate_array<int>(capacity);
  rank_ = scratch.allocate_array<int>(capacity);
  origin_ = scratch.allocate_array<int>(capacity);
  scan_bytes_ = 0;
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes_, cell_count_, cell_start_, int(cells)));
  scan_temp_ = scratch.allocate(std::max<size_t>(scan_bytes_, 16));

  const size_t n = size_t(plan.n);
  grid_ = scratch.allocate_array<float>(n * n);
  half_ = scratch.allocate_array<cufftComplex>(n * (n / 2 + 1));
  band_ = scratch.allocate_array<cufftComplex>(n * n);
  field_ = scratch.allocate_array<cufftComplex>(n * n);
  SP_CUDA_CHECK(cudaMemset(band_, 0, n * n * sizeof(cufftComplex)));  // outside the band stays zero
  size_t work_r2c = 0, work_c2c = 0;
  SP_CUFFT_CHECK(cufftCreate(&r2c_));
  SP_CUFFT_CHECK(cufftCreate(&c2c_));
  plans_ = true;
  SP_CUFFT_CHECK(cufftSetAutoAllocation(r2c_, 0));
  SP_CUFFT_CHECK(cufftSetAutoAllocation(c2c_, 0));
  SP_CUFFT_CHECK(cufftMakePlan2d(r2c_, int(n), int(n), CUFFT_R2C, &work_r2c));
  SP_CUFFT_CHECK(cufftMakePlan2d(c2c_, int(n), int(n), CUFFT_C2C, &work_c2c));
  void* work = scratch.allocate(std::max<size_t>({work_r2c, work_c2c, 16}));
  SP_CUFFT_CHECK(cufftSetWorkArea(r2c_, work));  // the two transforms run one after the other
  SP_CUFFT_CHECK(cufftSetWorkArea(c2c_, work));
}

void FastsumGpu::sort(const float2* pos, float2* sorted, const int* count, cudaStream_t stream) {
  const int cells = dp_.cells_x * dp_.cells_y;
  SP_CUDA_CHECK(cudaMemsetAsync(cell_count_, 0, sizeof(int) * (cells + 1), stream));
  count_cells<<<particle_blocks_, kThreads, 0, stream>>>(pos, count, dp_, key_, rank_, cell_count_);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_, scan_bytes_, cell_count_, cell_start_, cells + 1, stream));
  scatter_cells<<<particle_blocks_, kThreads, 0, stream>>>(pos, count, key_, rank_, cell_start_, sorted, origin_);
  SP_CUDA_CHECK_LAUNCH();
  order_cells<<<(cells + kThreads - 1) / kThreads, kThreads, 0, stream>>>(cell_start_, cells, sorted, origin_);
  SP_CUDA_CHECK_LAUNCH();
}

void FastsumGpu::far_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream,
                           cudaEvent_t after_spread, cudaEvent_t after_fft) {
  const size_t n = size_t(dp_.n);
  SP_CUDA_CHECK(cudaMemsetAsync(grid_, 0, n * n * sizeof(float), stream));
  spread<<<particle_blocks_, kThreads, 0, stream>>>(sorted, count, dp_, grid_);
  SP_CUDA_CHECK_LAUNCH();
  if (after_spread) SP_CUDA_CHECK(cudaEventRecord(after_spread, stream));
  SP_CUFFT_CHECK(cufftSetStream(r2c_, stream));
  SP_CUFFT_CHECK(cufftExecR2C(r2c_, grid_, half_));
  const dim3 grid((dp_.N - 1 + kThreads - 1) / kThreads, dp_.N - 1);
  multiply_band<<<grid, kThreads, 0, stream>>>(half_, dp_, band_);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUFFT_CHECK(cufftSetStream(c2c_, stream));
  SP_CUFFT_CHECK(cufftExecC2C(c2c_, band_, field_, CUFFT_INVERSE));
  if (after_fft) SP_CUDA_CHECK(cudaEventRecord(after_fft, stream));
  interpolate<<<particle_blocks_, kThreads, 0, stream>>>(sorted, count, dp_, field_, force);
  SP_CUDA_CHECK_LAUNCH();
}

void FastsumGpu::add_near_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream) {
  near_field<<<particle_blocks_, kThreads, 0, stream>>>(sorted, count, dp_, cell_start_, force);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
