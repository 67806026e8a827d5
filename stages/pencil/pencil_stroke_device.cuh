#pragma once
// Device helpers of the stroke kernels (pencil_stroke.cu only): tile loads,
// the register-window chunks and box runs of a StrokePlan, thread layout.
#include <cstdint>

#include "stages/pencil/pencil_cuda.h"

namespace sp::pencil::gpu::stroke {

constexpr int kRun = kPlanRun;
constexpr int kTile = kPlanTile;
constexpr int kStrokeThreads = 256;              // 8 warps: (64 / 32) lanes x (64 / kRun) groups
constexpr int kStrokeBlocksPerSm = 3;           // register cap (85): 24 warps per SM at 1080p's tile size
constexpr int kExchangePitch = kPlanTile + 1;    // odd: conflict-free row and column access

// The block's tile plus a halo of half_length (zeros outside the frame) as
// floats, row-major or transposed. `value` maps a stored word to its value
// (and 0 to 0). Each thread issues all loads of two tile rows before it stores
// any, so a block waits for one memory latency per 16 rows, not per value.
constexpr int kLoadRowsInFlight = 2;
constexpr int kMaxTileColumnSteps = (kTile + 2 * kMaxHalfLength + 31) / 32;
template <class Store>
__device__ void load_tile_words(const uint16_t* __restrict__ src, int w, int h, int half, Store store) {
  const int side = kTile + 2 * half;
  const int gx0 = blockIdx.x * kTile - half, gy0 = blockIdx.y * kTile - half;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kStrokeThreads / 32;
  for (int ty0 = warp; ty0 < side; ty0 += warps * kLoadRowsInFlight) {
    uint16_t v[kLoadRowsInFlight][kMaxTileColumnSteps];
#pragma unroll
    for (int a = 0; a < kLoadRowsInFlight; ++a) {
      const int gy = gy0 + ty0 + warps * a;
      const bool row_in = ty0 + warps * a < side && gy >= 0 && gy < h;
#pragma unroll
      for (int c = 0; c < kMaxTileColumnSteps; ++c) {
        const int tx = lane + 32 * c, gx = gx0 + tx;
        v[a][c] = row_in && tx < side && gx >= 0 && gx < w ? __ldg(src + size_t(gy) * w + gx) : uint16_t(0);
      }
    }
#pragma unroll
    for (int a = 0; a < kLoadRowsInFlight; ++a) {
      const int ty = ty0 + warps * a;
#pragma unroll
      for (int c = 0; c < kMaxTileColumnSteps; ++c) {
        const int tx = lane + 32 * c;
        if (ty < side && tx < side) store(ty, tx, v[a][c]);
      }
    }
  }
}

template <class Fn>
__device__ void load_tile(const uint16_t* __restrict__ src, int w, int h, int half, int pitch, bool transposed,
                          float* tile, Fn value) {
  load_tile_words(src, w, h, half, [&](int ty, int tx, uint16_t v) {
    tile[transposed ? tx * pitch + ty : ty * pitch + tx] = value(v);
  });
}

// The float tile of direction d's masked gradient from the block's words in shared memory.
__device__ void build_masked_tile(const uint16_t* words, int half, int pitch, bool transposed, int d, float* tile) {
  const int side = kTile + 2 * half;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kStrokeThreads / 32;
  for (int ty = warp; ty < side; ty += warps)
    for (int tx = lane; tx < side; tx += 32)
      tile[transposed ? tx * pitch + ty : ty * pitch + tx] = float(masked_gradient(words[ty * side + tx], d));
}

// kRun FMAs per tap: window of kRun + C - 1 consecutive tile values.
// Plan words live in shared memory when they fit (kShared), else in global memory.
template <bool kShared, class T>
__device__ __forceinline__ T plan_load(const T* at) {
  if constexpr (kShared) return *at;
  else return __ldg(at);
}

template <int C, bool kShared>
__device__ __forceinline__ void chunk_fma(const float* tile, int at, const float* weights, float (&acc)[kRun]) {
  float w[C < 4 ? 4 : C];
  const float4 w0 = plan_load<kShared>(reinterpret_cast<const float4*>(weights));
  w[0] = w0.x, w[1] = w0.y, w[2] = w0.z, w[3] = w0.w;
  if constexpr (C == 8) {
    const float4 w1 = plan_load<kShared>(reinterpret_cast<const float4*>(weights) + 1);
    w[4] = w1.x, w[5] = w1.y, w[6] = w1.z, w[7] = w1.w;
  }
  float window[kRun + C - 1];
#pragma unroll
  for (int i = 0; i < kRun + C - 1; ++i) window[i] = tile[at + i];
#pragma unroll
  for (int j = 0; j < C; ++j)
#pragma unroll
    for (int r = 0; r < kRun; ++r) acc[r] = fmaf(w[j], window[r + j], acc[r]);
}

// A run of `length` equal weights: a sliding box sum along the thread's outputs
// (2 loads and adds per output instead of `length` FMAs). Sums of at most 129
// values <= 511 are exact floats; the product is bounded by the plan's flushes.
__device__ __forceinline__ void box_fma(const float* tile, int at, int length, float weight, float (&acc)[kRun]) {
  float box = 0.f;
  for (int i = 0; i < length; ++i) box += tile[at + i];
#pragma unroll
  for (int r = 0; r < kRun; ++r) {
    acc[r] = fmaf(weight, box, acc[r]);
    if (r + 1 < kRun) box += tile[at + r + length] - tile[at + r];
  }
}

// One direction's response at the thread's kRun outputs (tile index `base` of
// the first), exact: float partials are moved into uint32 at flush marks.
// Records have a fixed stride, so the next header is loaded ahead.
template <bool kShared>
__device__ __forceinline__ void direction_total(const float* tile, int base, const float* plan, int begin, int end,
                                                uint32_t (&total)[kRun]) {
  float acc[kRun];
#pragma unroll
  for (int r = 0; r < kRun; ++r) acc[r] = 0.f, total[r] = 0u;
  int4 head = begin < end ? plan_load<kShared>(reinterpret_cast<const int4*>(plan + begin)) : make_int4(0, 0, 0, 0);
  for (int i = begin; i < end; i += kPlanRecordWords) {
    const int4 next =
        i + kPlanRecordWords < end ? plan_load<kShared>(reinterpret_cast<const int4*>(plan + i + kPlanRecordWords))
                                   : head;
    const float* weights = plan + i + kPlanHeaderWords;
    const int at = base + head.x;
    switch (head.y) {
      case 1: chunk_fma<1, kShared>(tile, at, weights, acc); break;
      case 2: chunk_fma<2, kShared>(tile, at, weights, acc); break;
      case 4: chunk_fma<4, kShared>(tile, at, weights, acc); break;
      case 8: chunk_fma<8, kShared>(tile, at, weights, acc); break;
      default: box_fma(tile, at, -head.y, plan_load<kShared>(weights), acc); break;
    }
    if (head.z) {
#pragma unroll
      for (int r = 0; r < kRun; ++r) total[r] += __float2uint_rz(acc[r]), acc[r] = 0.f;
    }
    head = next;
  }
#pragma unroll
  for (int r = 0; r < kRun; ++r) total[r] += __float2uint_rz(acc[r]);
}

// Shared memory of a stroke block: the tile, the pass exchange, then the plan
// (when it is staged there), then the draw kernel's class words (when there).
__device__ float* shared_after_exchange(const DeviceStrokePlan& p, float* smem) {
  float* after = smem + size_t(kTile + 2 * p.half_length) * p.pitch + kTile * kExchangePitch;
  return after + (4 - (reinterpret_cast<uintptr_t>(after) / sizeof(float)) % 4) % 4;  // 16-byte aligned
}
// Stages the plan; returns the plan pointer to use.
template <bool kShared>
__device__ const float* stage_plan(const DeviceStrokePlan& p, float* smem) {
  if constexpr (!kShared) {
    return p.words;
  } else {
    const int words = p.begin[kDirections];
    float* plan = shared_after_exchange(p, smem);
    for (int i = threadIdx.x; i < words / 4; i += kStrokeThreads)
      reinterpret_cast<float4*>(plan)[i] = __ldg(reinterpret_cast<const float4*>(p.words) + i);
    return plan;  // the first __syncthreads of the kernel publishes it
  }
}

// Thread layout. Row pass: lanes walk rows, each thread kRun columns.
// Column pass (transposed tile): lanes walk columns, each thread kRun rows.
struct Owner {
  int along0, across;  // first output along the thread's run, and the other coordinate
};
__device__ Owner owner() {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  return {kRun * (warp >> 1), 32 * (warp & 1) + lane};
}

}  // namespace sp::pencil::gpu::stroke
