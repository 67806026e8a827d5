// CUDA fast summation: set-up, the counting sort by cell and the near field
// (the far field is in fastsum_far.cu).
#include <cub/device/device_scan.cuh>

#include <climits>

#include "pipeline/cuda_check.h"
#include "stages/halftone/fastsum_gpu.h"

namespace sp::halftone {

namespace {

constexpr int kThreads = 256;

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

// Atomic ranks are in arrival order: restore index order within each cell,
// so the result equals the CPU's stable sort. A warp a cell: cells hold a
// handful of dots, so each lane takes one and its rank is the number of
// smaller indices (a thread a cell spent ~25 us at 1080p moving dots through
// global memory one at a time). Cells of more than 32 fall back to an
// insertion sort on lane 0.
__global__ void order_cells(const int* cell_start, int cells, float2* sorted, int* origin) {
  const int c = int((blockIdx.x * size_t(blockDim.x) + threadIdx.x) / 32), lane = int(threadIdx.x % 32);
  if (c >= cells) return;  // the whole warp
  const int lo = cell_start[c], hi = cell_start[c + 1], n = hi - lo;
  if (n <= 1) return;
  if (n <= 32) {
    const int o = lane < n ? origin[lo + lane] : INT_MAX;
    const float2 v = lane < n ? sorted[lo + lane] : make_float2(0.f, 0.f);
    int rank = 0;
    for (int k = 0; k < n; ++k) rank += __shfl_sync(0xffffffffu, o, k) < o;
    __syncwarp();  // every lane has read before any writes
    if (lane < n) {
      origin[lo + rank] = o;
      sorted[lo + rank] = v;
    }
    return;
  }
  if (lane != 0) return;
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

// near_correction with the polynomial's T terms in registers: T > 0 is the
// plan's count (4 for accuracy_p 5), unrolled; T = 0 reads it from the plan.
template <int T>
struct NearTerms {
  float c[T > 0 ? T : 1];
  __device__ explicit NearTerms(const NearKernel& k) {
#pragma unroll
    for (int j = 0; j < T; ++j) c[j] = k.coef[j];
  }
  __device__ __forceinline__ void add(const NearKernel& k, float dx, float dy, float& fx, float& fy) const {
    if constexpr (T == 0) {
      near_correction(k, dx, dy, fx, fy);
    } else {
      // Without a branch: an IEEE reciprocal (rcp.rn) carries a slow-path
      // test that splits the warp; the approximate one is within 2 ulp of it
      // here (q2 is a normal number wherever the pair counts), far below the
      // far field's error.
      const float r2 = dx * dx + dy * dy;
      const float q2 = r2 * k.inv_eps2;
      float poly = 0.f;
#pragma unroll
      for (int j = T - 1; j >= 0; --j) poly = poly * q2 + c[j];
      const float s = k.inv_eps2 * (__fdividef(1.f, q2) - poly);
      if (q2 < 1.f && r2 >= 1e-12f) {
        fx += s * dx;
        fy += s * dy;
      }
    }
  }
};

// The near field is bound by instructions issued (ncu: 71 % of issue slots
// busy at 3.3 IPC), not by memory: a pair costs its arithmetic, so the
// polynomial's coefficients are unrolled registers rather than a loop over
// constant memory.
template <int T>
__global__ void near_field(const float2* pos, const int* count, DevicePlan p, const int* cell_start, float2* force) {
  const int m = *count;
  const float icw = 1.f / p.cell_w, ich = 1.f / p.cell_h;
  const NearTerms<T> terms(p.near);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    const float2 me = pos[i];
    const int c = cell_of(me.x, me.y, p.cells_x, p.cells_y, icw, ich);
    const int cx = c % p.cells_x, cy = c / p.cells_x;
    float fx = 0.f, fy = 0.f;
    for (int y = max(cy - 1, 0); y <= min(cy + 1, p.cells_y - 1); ++y) {
      const int row = y * p.cells_x;
      const int lo = cell_start[row + max(cx - 1, 0)], hi = cell_start[row + min(cx + 1, p.cells_x - 1) + 1];
      // Four neighbours' loads before their arithmetic. The sums keep their
      // order. The dot itself adds nothing (r = 0 is skipped), so it needs no test.
      int j = lo;
      for (; j + 4 <= hi; j += 4) {
        float2 q[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) q[u] = pos[j + u];
#pragma unroll
        for (int u = 0; u < 4; ++u) terms.add(p.near, me.x - q[u].x, me.y - q[u].y, fx, fy);
      }
      for (; j < hi; ++j) terms.add(p.near, me.x - pos[j].x, me.y - pos[j].y, fx, fy);
    }
    force[i].x += fx;
    force[i].y += fy;
  }
}

}  // namespace

FastsumGpu::~FastsumGpu() { release(); }

void FastsumGpu::release() {
  if (plans_) {
    for (cufftHandle h : {fft_rows_r2c_, fft_cols_, ifft_cols_, ifft_rows_}) cufftDestroy(h);
    plans_ = false;
  }
}

void FastsumGpu::configure(const FastsumPlan& plan, int capacity, ScratchAllocator& scratch, bool exact_sums) {
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

  exact_ = false;
  configure_far(plan, scratch, exact_sums);
}

void FastsumGpu::sort(const float2* pos, float2* sorted, const int* count, cudaStream_t stream) {
  const int cells = dp_.cells_x * dp_.cells_y;
  SP_CUDA_CHECK(cudaMemsetAsync(cell_count_, 0, sizeof(int) * (cells + 1), stream));
  count_cells<<<particle_blocks_, kThreads, 0, stream>>>(pos, count, dp_, key_, rank_, cell_count_);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_, scan_bytes_, cell_count_, cell_start_, cells + 1, stream));
  scatter_cells<<<particle_blocks_, kThreads, 0, stream>>>(pos, count, key_, rank_, cell_start_, sorted, origin_);
  SP_CUDA_CHECK_LAUNCH();
  order_cells<<<int((size_t(cells) * 32 + kThreads - 1) / kThreads), kThreads, 0, stream>>>(cell_start_, cells, sorted,
                                                                                             origin_);
  SP_CUDA_CHECK_LAUNCH();
}

void FastsumGpu::add_near_field(const float2* sorted, const int* count, float2* force, cudaStream_t stream) {
  const auto kernel = dp_.near.terms == 4 ? near_field<4> : near_field<0>;  // accuracy_p 5, the default
  kernel<<<particle_blocks_, kThreads, 0, stream>>>(sorted, count, dp_, cell_start_, force);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
