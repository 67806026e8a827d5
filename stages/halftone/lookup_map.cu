// The lookup-map near field (see lookup_map.h).
#include <algorithm>
#include <cmath>

#include "pipeline/cuda_check.h"
#include "stages/halftone/lookup_map.h"

namespace sp::halftone {

namespace {

constexpr int kThreads = 256;
constexpr unsigned long long kEmpty = ~0ull;  // two NaNs: no dot has them

__device__ __forceinline__ unsigned long long pack(float2 p) {
  return uint64_t(__float_as_uint(p.x)) | uint64_t(__float_as_uint(p.y)) << 32;
}
__device__ __forceinline__ float2 unpack(unsigned long long v) {
  return make_float2(__uint_as_float(uint32_t(v)), __uint_as_float(uint32_t(v >> 32)));
}
__device__ __forceinline__ int slot_col(float x, const MapDims& d) {
  return min(max(int(x * d.inv_slot), 0), d.cols - 1);
}
__device__ __forceinline__ int slot_row(float y, const MapDims& d) {
  return min(max(int(y * d.inv_slot), 0), d.rows - 1);
}
__device__ __forceinline__ long long home_slot(float2 p, const MapDims& d) {
  return (long long)slot_row(p.y, d) * d.cols + slot_col(p.x, d);
}

__global__ void insert_dots(const float2* pos, const int* count, MapDims d, unsigned long long* map,
                            int* max_displacement) {
  const int m = *count;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    unsigned long long v = pack(pos[i]);
    long long k = home_slot(pos[i], d);
    int pushed = 0;
    for (;;) {
      const unsigned long long old = atomicExch(&map[k], v);
      pushed = max(pushed, int(k - home_slot(unpack(v), d)));
      if (old == kEmpty) break;
      v = old;  // carry the dot that was there one slot further right
      ++k;
    }
    if (pushed > 0) atomicMax(max_displacement, pushed);
  }
}

__global__ void near_field_map(const float2* pos, const int* count, MapDims d, const unsigned long long* map,
                               const int* max_displacement, NearKernel near, float2* force) {
  const int m = *count;
  const int extra = *max_displacement;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    const float2 me = pos[i];
    const int c0 = slot_col(me.x - near.eps, d), c1 = slot_col(me.x + near.eps, d);
    const int r0 = slot_row(me.y - near.eps, d), r1 = slot_row(me.y + near.eps, d);
    float fx = 0.f, fy = 0.f;
    long long next = 0;  // first slot not read yet: a long displacement must not be read twice
    for (int r = r0; r <= r1; ++r) {
      const long long lo = max((long long)r * d.cols + c0, next), hi = (long long)r * d.cols + c1 + extra;
      for (long long k = lo; k <= hi; ++k) {
        const unsigned long long v = __ldg(&map[k]);
        if (v == kEmpty) continue;
        const float2 q = unpack(v);
        near_correction(near, me.x - q.x, me.y - q.y, fx, fy);  // itself: r = 0, adds nothing
      }
      next = hi + 1;
    }
    force[i].x += fx;
    force[i].y += fy;
  }
}

}  // namespace

void LookupMapGpu::configure(int width, int height, int capacity, float slot_px, ScratchAllocator& scratch) {
  capacity_ = std::max(capacity, 1);
  dims_.inv_slot = 1.f / slot_px;
  dims_.cols = std::max(1, int(std::ceil(width * dims_.inv_slot)));
  dims_.rows = std::max(1, int(std::ceil(height * dims_.inv_slot)));
  dims_.slots = (long long)dims_.cols * dims_.rows + capacity_;
  map_ = scratch.allocate_array<unsigned long long>(size_t(dims_.slots));
  max_displacement_ = scratch.allocate_array<int>(1);
  int sms = 0, device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  blocks_ = std::max(1, std::min((capacity_ + kThreads - 1) / kThreads, sms * 8));
}

void LookupMapGpu::build(const float2* pos, const int* count, cudaStream_t stream) const {
  SP_CUDA_CHECK(cudaMemsetAsync(map_, 0xFF, sizeof(unsigned long long) * size_t(dims_.slots), stream));
  SP_CUDA_CHECK(cudaMemsetAsync(max_displacement_, 0, sizeof(int), stream));
  insert_dots<<<blocks_, kThreads, 0, stream>>>(pos, count, dims_, map_, max_displacement_);
  SP_CUDA_CHECK_LAUNCH();
}

void LookupMapGpu::add_near_field(const float2* pos, const int* count, const NearKernel& near, float2* force,
                                  cudaStream_t stream) const {
  build(pos, count, stream);
  near_field_map<<<blocks_, kThreads, 0, stream>>>(pos, count, dims_, map_, max_displacement_, near, force);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
