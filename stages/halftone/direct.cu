// GPU direct summation (see direct.h).
#include <algorithm>

#include "pipeline/cuda_check.h"
#include "stages/halftone/direct.h"

namespace sp::halftone {

namespace {

constexpr int kTile = 128;    // threads per block = partners per shared-memory tile
constexpr int kPerThread = 2;  // particles per thread: each tile load feeds two pairs
constexpr int kBlockParticles = kTile * kPerThread;

// Pairs closer than 1e-15 px (in practice: a dot and itself, or two
// coincident dots) add nothing, as in the float64 oracle.
__device__ __forceinline__ void add_term(float2 me, float2 other, float& sx, float& sy) {
  const float dx = me.x - other.x, dy = me.y - other.y;
  const float r2 = fmaf(dx, dx, dy * dy);
  float inv;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(inv) : "f"(r2));  // one MUFU op, ~1 ulp
  inv = r2 > 1e-30f ? inv : 0.f;
  sx = fmaf(dx, inv, sx);
  sy = fmaf(dy, inv, sy);
}

// Block (x, y): particles [x, x+1) * kBlockParticles against partner slice y.
__global__ void __launch_bounds__(kTile) direct_partial(const float2* pos, const int* count, int slices, int capacity,
                                                        double2* partial) {
  __shared__ float2 tile[kTile];
  const int m = *count;
  const int first = blockIdx.x * kBlockParticles;
  if (first >= m) return;  // the whole block leaves together
  const int i0 = first + threadIdx.x, i1 = i0 + kTile;
  const float2 me0 = i0 < m ? pos[i0] : make_float2(0.f, 0.f);
  const float2 me1 = i1 < m ? pos[i1] : make_float2(0.f, 0.f);
  const int lo = int(int64_t(m) * blockIdx.y / slices), hi = int(int64_t(m) * (blockIdx.y + 1) / slices);
  double ax0 = 0, ay0 = 0, ax1 = 0, ay1 = 0;
  for (int base = lo; base < hi; base += kTile) {
    const int j = base + threadIdx.x;
    if (j < hi) tile[threadIdx.x] = pos[j];
    __syncthreads();
    float sx0 = 0.f, sy0 = 0.f, sx1 = 0.f, sy1 = 0.f;
    const int n = min(kTile, hi - base);
    if (n == kTile) {
#pragma unroll 16
      for (int k = 0; k < kTile; ++k) {
        const float2 t = tile[k];
        add_term(me0, t, sx0, sy0);
        add_term(me1, t, sx1, sy1);
      }
    } else {
      for (int k = 0; k < n; ++k) {
        const float2 t = tile[k];
        add_term(me0, t, sx0, sy0);
        add_term(me1, t, sx1, sy1);
      }
    }
    ax0 += sx0;
    ay0 += sy0;
    ax1 += sx1;
    ay1 += sy1;
    __syncthreads();
  }
  double2* out = partial + size_t(blockIdx.y) * capacity;
  if (i0 < m) out[i0] = make_double2(ax0, ay0);
  if (i1 < m) out[i1] = make_double2(ax1, ay1);
}

__global__ void add_slices(const double2* partial, const int* count, int slices, int capacity, float2* force) {
  const int m = *count;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    double x = 0, y = 0;
    for (int s = 0; s < slices; ++s) {
      const double2 v = partial[size_t(s) * capacity + i];
      x += v.x;
      y += v.y;
    }
    force[i] = make_float2(float(x), float(y));
  }
}

}  // namespace

void DirectGpu::configure(int capacity, ScratchAllocator& scratch) {
  capacity_ = std::max(capacity, 1);
  int sms = 0, device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  blocks_ = (capacity_ + kBlockParticles - 1) / kBlockParticles;
  // About 8 blocks of 128 threads per SM keep the FP32 pipes busy.
  slices_ = std::clamp((8 * sms + blocks_ - 1) / blocks_, 1, 64);
  partial_ = scratch.allocate_array<double2>(size_t(slices_) * capacity_);
}

void DirectGpu::forces(const float2* pos, const int* count, float2* force, cudaStream_t stream) const {
  direct_partial<<<dim3(blocks_, slices_), kTile, 0, stream>>>(pos, count, slices_, capacity_, partial_);
  SP_CUDA_CHECK_LAUNCH();
  const int threads = 256, blocks = std::min((capacity_ + threads - 1) / threads, 4096);
  add_slices<<<blocks, threads, 0, stream>>>(partial_, count, slices_, capacity_, force);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
