// CUDA far field: spread (B^T, tiles of cells in shared memory), the 2D FFTs as
// pruned 1D passes, the band multiply with the window's deconvolution (D,
// folded into the kernel's quadrant), interpolation (B).
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
#include <cmath>
#include <string>

#include "pipeline/cuda_check.h"
#include "pipeline/errors.h"
#include "stages/halftone/cufft_check.h"
#include "stages/halftone/fastsum_gpu.h"
#include "stages/halftone/kernel_spectra_gpu.h"
#include "stages/halftone/transpose_gpu.h"

namespace sp::halftone {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;

__device__ __forceinline__ int wrap_once(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

// Spread (B^T). Each block takes a tile of spread_cells x spread_cells cells
// of the cell table (the particles are sorted by cell, so each cell row of
// the tile is one contiguous range), accumulates their windows in a
// shared-memory box (the tile's grid points plus the window's reach) and adds
// the box to the grid with one global atomic per touched point, cuFINUFFT's
// "SM" scheme. Tiles of cells, unlike chunks of a fixed particle count, always
// fit the box: chunks that straddled cell rows or sparse strips used to fall
// back to global atomics for a third of the taps at 1080p.
constexpr int kSpreadBoxFloats = 12000;  // 47 KB: a tile's box, for several blocks per SM
constexpr int kMaxTileCells = 32;       // cell rows of a tile, for the shared row ranges

// Exact sums: the windows as fixed-point integers (2^-32 units; a weight is
// at most 1), whose sums do not depend on the order the atomics land in, so
// the same dots always give the same grid to the bit. Float atomics round in
// arrival order, and the dots, being chaotic, make a different arrangement of
// that within frames: the seams of segment-parallel runs need the same one.
constexpr float kFixedOne = 4294967296.f;

// The spread and the interpolation take the window's cut-off m as a template
// argument for the common settings (M > 0), so that their 2m x 2m loops
// unroll and the weights stay in registers: with a run-time m, both kept
// them in a 160-byte local array and ran each tap's load after the last
// tap's arithmetic. M = 0 reads m from the plan (any accuracy_m).
template <int M>
__device__ __forceinline__ int weights(const Window& w, float u, float* out) {
  if constexpr (M == 0) {
    return window_weights(w, u, out);
  } else {
    const int first = int(floorf(u)) - M + 1;
#pragma unroll
    for (int k = 0; k < 2 * M; ++k) out[k] = kb_window(w, u - float(first + k));
    return first;
  }
}

template <bool kExact, int M>
__global__ void __launch_bounds__(kThreads) spread(const float2* pos, const int* cell_start, DevicePlan p,
                                                   float* grid, unsigned long long* exact_grid) {
  extern __shared__ unsigned long long spread_box_words[];  // spread_box_floats floats, or as many words when exact
  float* box = reinterpret_cast<float*>(spread_box_words);
  unsigned long long* exact_box = spread_box_words;
  __shared__ int range_lo[kMaxTileCells], range_end[kMaxTileCells + 1];  // range_end: running particle counts
  const int m = M > 0 ? M : p.window.m, m2 = 2 * m, n = p.n, t = p.spread_cells;
  const float cx = 0.5f * p.width, cy = 0.5f * p.height;
  const int c0 = blockIdx.x * t, c1 = min(c0 + t, p.cells_x);
  const int r0 = blockIdx.y * t, r1 = min(r0 + t, p.cells_y);
  // The box: first window indices of particles inside the tile's pixels, with
  // one point of slack on each side for the rounding of the cell lookup (the
  // last cells also hold particles on the frame's right and bottom edges).
  const int x0 = int(floorf((c0 * p.cell_w - cx) * p.grid_per_pixel)) - m;
  const int y0 = int(floorf((r0 * p.cell_h - cy) * p.grid_per_pixel)) - m;
  const int bw = int(floorf((c1 * p.cell_w - cx) * p.grid_per_pixel)) + m + 2 - x0;
  const int bh = int(floorf((r1 * p.cell_h - cy) * p.grid_per_pixel)) + m + 2 - y0;
  for (int e = threadIdx.x; e < bw * bh; e += blockDim.x) {
    if constexpr (kExact)
      exact_box[e] = 0;
    else
      box[e] = 0.f;
  }
  if (threadIdx.x == 0) {
    int total = 0;
    range_end[0] = 0;
    for (int r = r0; r < r1; ++r) {
      const int lo = cell_start[r * p.cells_x + c0], hi = cell_start[r * p.cells_x + c1];
      range_lo[r - r0] = lo;
      total += hi - lo;
      range_end[r - r0 + 1] = total;
    }
  }
  __syncthreads();
  // Consecutive threads take consecutive dots (the same cell). Spreading a
  // warp's lanes over the tile was measured and was no faster: ncu counted
  // more shared atomic instructions (3.09 M against 2.66 M at 1080p, for
  // 0.79 M warps' worth of taps), as if retried under contention that only
  // moved from within warps to between the block's warps.
  const int rows = r1 - r0, total = range_end[rows];
  for (int k = threadIdx.x; k < total; k += blockDim.x) {
    int r = 0;
    while (range_end[r + 1] <= k) ++r;
    const float2 q = pos[range_lo[r] + k - range_end[r]];
    constexpr int kWeights = 2 * (M > 0 ? M : kMaxCutoff);
    float wx[kWeights], wy[kWeights];
    const int fx = weights<M>(p.window, (q.x - cx) * p.grid_per_pixel, wx) - x0;
    const int fy = weights<M>(p.window, (q.y - cy) * p.grid_per_pixel, wy) - y0;
#pragma unroll
    for (int a = 0; a < m2; ++a) {
      const int row = (fy + a) * bw + fx;
#pragma unroll
      for (int b = 0; b < m2; ++b) {
        if constexpr (kExact)
          atomicAdd(exact_box + row + b, static_cast<unsigned long long>(__float2ll_rn(wy[a] * wx[b] * kFixedOne)));
        else
          atomicAdd(box + row + b, wy[a] * wx[b]);
      }
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < bw * bh; e += blockDim.x) {
    const size_t at = size_t(y0 + e / bw + p.row_offset) * n + wrap_once(x0 + e % bw, n);
    if constexpr (kExact) {
      if (exact_box[e] != 0) atomicAdd(exact_grid + at, exact_box[e]);
    } else {
      const float v = box[e];
      if (v != 0.f) atomicAdd(grid + at, v);
    }
  }
}

__global__ void exact_to_float(const unsigned long long* exact_grid, size_t points, float* grid) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < points; i += size_t(gridDim.x) * blockDim.x)
    grid[i] = float(double(static_cast<long long>(exact_grid[i])) * (1.0 / 4294967296.0));
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
// G from the j1 >= 0 half (spectrum[j1 * n + wrap(j2)]) by Hermitian symmetry,
// b_j / (c_j1 c_j2)^2 from the quadrant.
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
  // Im b is odd in j1, Re b odd in j2 (kernel_spectra_gpu.h).
  const float2 t = p.kernel_quadrant[size_t(abs(j1)) * (N / 2) + abs(j2)];
  const float bi = j1 < 0 ? -t.x : t.x, br = j2 < 0 ? t.y : -t.y;
  band[size_t(j1 + N / 2) * n + wrap_once(j2, n)] = make_float2(g.x * br - g.y * bi, g.x * bi + g.y * br);
}

template <int M>
__global__ void interpolate(const float2* pos, const int* count, DevicePlan p, const cufftComplex* field,
                            float2* force) {
  const int dots = *count, m2 = 2 * (M > 0 ? M : p.window.m), n = p.n;
  const float cx = 0.5f * p.width, cy = 0.5f * p.height;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < dots; i += gridDim.x * blockDim.x) {
    constexpr int kWeights = 2 * (M > 0 ? M : kMaxCutoff);
    float wx[kWeights], wy[kWeights];
    const int fx = weights<M>(p.window, (pos[i].x - cx) * p.grid_per_pixel, wx);
    const int fy = weights<M>(p.window, (pos[i].y - cy) * p.grid_per_pixel, wy);
    float ax = 0.f, ay = 0.f;
#pragma unroll
    for (int k = 0; k < m2; ++k) {
      const cufftComplex* row = field + size_t(fy + k + p.row_offset) * n;
      float rx = 0.f, ry = 0.f;
#pragma unroll
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

using SpreadKernel = void (*)(const float2*, const int*, DevicePlan, float*, unsigned long long*);
using InterpolateKernel = void (*)(const float2*, const int*, DevicePlan, const cufftComplex*, float2*);

// The instances for the cut-offs the configs use (3 for video, the seed's 5, and 4 between).
template <bool kExact>
SpreadKernel spread_kernel(int m) {
  switch (m) {
    case 3: return spread<kExact, 3>;
    case 4: return spread<kExact, 4>;
    case 5: return spread<kExact, 5>;
    default: return spread<kExact, 0>;
  }
}

InterpolateKernel interpolate_kernel(int m) {
  switch (m) {
    case 3: return interpolate<3>;
    case 4: return interpolate<4>;
    case 5: return interpolate<5>;
    default: return interpolate<0>;
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

}  // namespace

void launch_transpose(const float2* src, int src_pitch, int src_shift, float2* dst, int dst_pitch, int dst_shift,
                      int rows, int cols, int n, cudaStream_t stream) {
  const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
  transpose<<<grid, dim3(kTile, 8), 0, stream>>>(src, src_pitch, src_shift, dst, dst_pitch, dst_shift, rows, cols, n);
  SP_CUDA_CHECK_LAUNCH();
}

void FastsumGpu::configure_far(const FastsumPlan& plan, ScratchAllocator& scratch, bool exact_sums) {
  const int N = plan.N, n = plan.n, m = plan.window.m;
  // Rows the spread can touch: |v| <= height/2 * grid_per_pixel + m (+ margin for rounding).
  dp_.row_offset = std::min(n / 2 - 1, int(std::ceil(0.5 * plan.height * plan.grid_per_pixel)) + m + 2);
  dp_.rows = 2 * dp_.row_offset + 1;
  // The largest square tile of cells whose box fits the shared memory: a
  // cell is about p * sigma grid points on a side (eps_I = p / N, n = sigma N).
  // (+4: the kernel's slack of one point a side, and one for its float rounding.)
  const auto box_floats = [&](int cells) {
    const auto side = [&](float cell_px) { return int(std::ceil(cells * cell_px * plan.grid_per_pixel)) + 2 * m + 4; };
    return side(plan.cell_w) * side(plan.cell_h);
  };
  // Larger tiles add fewer boxes to the grid (their borders overlap), but
  // the GPU needs a few tiles per SM to balance dense and sparse ones.
  int device = 0, optin = 0, sms = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto tiles = [&](int cells) {
    return ((plan.cells_x + cells - 1) / cells) * ((plan.cells_y + cells - 1) / cells);
  };
  dp_.spread_cells = 1;
  while (dp_.spread_cells < kMaxTileCells && box_floats(dp_.spread_cells + 1) <= kSpreadBoxFloats &&
         tiles(dp_.spread_cells + 1) >= 4 * sms)
    ++dp_.spread_cells;
  // Extreme settings (large accuracy_p and oversampling on a small frame)
  // give cells whose single box needs more than the default 48 KB.
  spread_shared_bytes_ = sizeof(float) * size_t(box_floats(dp_.spread_cells));
  if (spread_shared_bytes_ > size_t(optin))
    throw Error(ExitCode::config, "halftone: a near-field cell of " + std::to_string(int(plan.cell_w * plan.grid_per_pixel)) +
                                      " grid points needs " + std::to_string(spread_shared_bytes_ / 1024) +
                                      " KB of shared memory for the spread, more than the GPU's " +
                                      std::to_string(optin / 1024) + " KB (lower accuracy_p or oversampling)");
  if (spread_shared_bytes_ > 48 * 1024)
    SP_CUDA_CHECK(cudaFuncSetAttribute(spread_kernel<false>(m), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(spread_shared_bytes_)));
  if (exact_sums) {
    exact_shared_bytes_ = 2 * spread_shared_bytes_;  // a word per grid point
    if (exact_shared_bytes_ > size_t(optin))
      throw Error(ExitCode::config, "halftone: the exact spread (deterministic, or a seam's handover) needs " +
                                        std::to_string(exact_shared_bytes_ / 1024) + " KB of shared memory, more than "
                                        "the GPU's " + std::to_string(optin / 1024) +
                                        " KB (lower accuracy_p or oversampling; deterministic: false and "
                                        "seam_seconds: 0 turn it off)");
    if (exact_shared_bytes_ > 48 * 1024)
      SP_CUDA_CHECK(cudaFuncSetAttribute(spread_kernel<true>(m), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(exact_shared_bytes_)));
  }
  spread_grid_ = dim3((plan.cells_x + dp_.spread_cells - 1) / dp_.spread_cells,
                      (plan.cells_y + dp_.spread_cells - 1) / dp_.spread_cells);
  const size_t rows = size_t(dp_.rows), hw = size_t(n / 2 + 1), nn = size_t(n);
  kernel_quadrant_ = shared_kernel_quadrant(plan);
  dp_.kernel_quadrant = kernel_quadrant_->data();

  grid_ = scratch.allocate_array<float>(rows * nn);
  exact_grid_ = exact_sums ? scratch.allocate_array<unsigned long long>(rows * nn) : nullptr;
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
  if (exact_) {
    const size_t points = size_t(rows) * n;
    SP_CUDA_CHECK(cudaMemsetAsync(exact_grid_, 0, points * sizeof(unsigned long long), stream));
    spread_kernel<true>(dp_.window.m)<<<spread_grid_, kThreads, exact_shared_bytes_, stream>>>(sorted, cell_start_, dp_,
                                                                                               grid_, exact_grid_);
    SP_CUDA_CHECK_LAUNCH();
    exact_to_float<<<particle_blocks_, kThreads, 0, stream>>>(exact_grid_, points, grid_);
  } else {
    SP_CUDA_CHECK(cudaMemsetAsync(grid_, 0, size_t(rows) * n * sizeof(float), stream));
    spread_kernel<false>(dp_.window.m)<<<spread_grid_, kThreads, spread_shared_bytes_, stream>>>(sorted, cell_start_, dp_,
                                                                                                grid_, nullptr);
  }
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
  far_field_of_last_spread(sorted, count, force, stream);
}

void FastsumGpu::far_field_of_last_spread(const float2* sorted, const int* count, float2* force, cudaStream_t stream) {
  interpolate_kernel(dp_.window.m)<<<particle_blocks_, kThreads, 0, stream>>>(sorted, count, dp_, field_, force);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
