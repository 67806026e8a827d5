#pragma once
// Device helpers of the stroke kernels (pencil_stroke.cu only): byte tile
// loads, the class-masked tiles of the draw kernel, shared-memory layout,
// thread layout. The per-record arithmetic is in pencil_stroke_simd.h.
#include <cstdint>

#include "stages/pencil/pencil_cuda.h"
#include "stages/pencil/pencil_stroke_diagonal.h"
#include "stages/pencil/pencil_stroke_simd.h"

namespace sp::pencil::gpu::stroke {

constexpr int kRun = kPlanRun;
constexpr int kTile = kPlanTile;
constexpr int kStrokeThreads = 256;              // 8 warps: (64 / 32) lanes x (64 / kRun) groups
constexpr int kStrokeBlocksPerSm = 3;           // register cap (85)
constexpr int kExchangePitch = kPlanTile + 1;    // odd: conflict-free row and column access

// Reads the block's tile plus a halo of half_length (zeros outside the frame)
// and hands every (tile row, tile column, word) to `store`. Each thread issues
// all loads of two tile rows before it stores any, so a block waits for one
// memory latency per 16 rows, not per value.
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

// The byte tile of the gradient (the low byte of each word), row-major or transposed.
__device__ void load_byte_tile(const uint16_t* __restrict__ src, int w, int h, int half, int pitch, bool transposed,
                               uint8_t* tile) {
  load_tile_words(src, w, h, half, [&](int ty, int tx, uint16_t v) {
    tile[transposed ? tx * pitch + ty : ty * pitch + tx] = uint8_t(v);
  });
}

// The byte tile of direction d's masked gradient from the block's class words
// in shared memory (side x side, row-major), four bytes per store; the pad
// bytes of each row become 0. Lanes take consecutive words of the source
// (row-major) or consecutive tile rows (transposed): no bank conflicts.
__device__ __forceinline__ uint32_t masked_group(const uint16_t* words, int side, bool transposed, int d, int row,
                                                 int g) {
  uint32_t packed = 0;
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const int col = 4 * g + b;  // along the tile row being written
    if (col < side) packed |= masked_gradient(transposed ? words[col * side + row] : words[row * side + col], d) << (8 * b);
  }
  return packed;
}
__device__ void build_masked_tile(const uint16_t* words, int half, int pitch, bool transposed, int d, uint8_t* tile) {
  const int side = kTile + 2 * half, groups = pitch / 4;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kStrokeThreads / 32;
  uint32_t* tile_words = reinterpret_cast<uint32_t*>(tile);
  if (transposed) {
    for (int row0 = 0; row0 < side; row0 += 32) {
      const int row = row0 + lane;
      if (row < side)
        for (int g = warp; g < groups; g += warps) tile_words[row * groups + g] = masked_group(words, side, true, d, row, g);
    }
  } else if (side % 4 == 0) {
    // Rows start 8-byte aligned: 4 class words per load (2 wavefronts per warp instead of 8 for 4 loads).
    const uint2* quads = reinterpret_cast<const uint2*>(words);
    const int per_row = side / 4;
    for (int row = warp; row < side; row += warps)
      for (int g = lane; g < groups; g += 32) {
        uint32_t packed = 0;
        if (g < per_row) {
          const uint2 v = quads[row * per_row + g];
          packed = masked_gradient(uint16_t(v.x), d) | masked_gradient(uint16_t(v.x >> 16), d) << 8 |
                   masked_gradient(uint16_t(v.y), d) << 16 | masked_gradient(uint16_t(v.y >> 16), d) << 24;
        }
        tile_words[row * groups + g] = packed;
      }
  } else {
    for (int row = warp; row < side; row += warps)
      for (int g = lane; g < groups; g += 32) tile_words[row * groups + g] = masked_group(words, side, false, d, row, g);
  }
}

// Shared memory of a stroke block: the byte tile (stroke_tile_bytes) and the
// pass exchange, or over both of them, once the passes are done, the prefix
// tile of a diagonal direction (the larger of the two); then the plan (when it
// is staged there), then the draw kernel's class words (when there). All
// offsets are multiples of 16 bytes.
__host__ __device__ inline size_t exchange_offset(int half) { return size_t(stroke_tile_bytes(half)); }
__host__ __device__ inline size_t plan_offset(const DeviceStrokePlan& p) {
  const size_t passes = exchange_offset(p.half_length) + (size_t(kTile) * kExchangePitch * 4 + 15) / 16 * 16;
  const size_t prefix = size_t(stroke_prefix_bytes(p.half_length));
  return p.diagonal_begin < p.mma_begin && prefix > passes ? prefix : passes;
}
__host__ __device__ inline size_t class_offset(const DeviceStrokePlan& p, int plan_words) {
  return plan_offset(p) + size_t(plan_words) * 4;
}

// Stages the plan; returns the plan pointer to use.
template <bool kShared>
__device__ const uint32_t* stage_plan(const DeviceStrokePlan& p, unsigned char* smem) {
  if constexpr (!kShared) {
    return p.words;
  } else {
    const int words = p.begin[kDirections];
    uint32_t* plan = reinterpret_cast<uint32_t*>(smem + plan_offset(p));
    for (int i = threadIdx.x; i < words / 4; i += kStrokeThreads)
      reinterpret_cast<uint4*>(plan)[i] = __ldg(reinterpret_cast<const uint4*>(p.words) + i);
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

// The prefix tile of a diagonal direction (pencil_stroke_diagonal.h) at the
// start of shared memory: `fill(store)` hands every tile pixel's value to
// store(ty, tx, v); the pads are zeroed, then threads walk whole lines.
// The caller has synchronized (nothing reads the tile or the exchange any
// more); on return the tile is published.
template <class Fill>
__device__ void build_prefix(int half, int step, uint16_t* prefix, Fill fill) {
  fill([&](int ty, int tx, uint32_t v) { simd::prefix_store(prefix, half, step, tx, ty, v); });
  for (int i = threadIdx.x; i < simd::prefix_pad_count(half); i += kStrokeThreads)
    simd::prefix_zero_pad(prefix, half, step, i);
  __syncthreads();
  // One pair of lines per thread (side <= 192 < kStrokeThreads): the walk takes side steps.
  for (int pair = threadIdx.x; pair < stroke_tile_side(half); pair += kStrokeThreads)
    simd::prefix_walk_pair(prefix, half, step, pair);
  __syncthreads();
}

// One diagonal direction's response at the thread's outputs (column-pass
// layout: column o.across, rows o.along0..).
template <bool kShared>
__device__ void diagonal_direction(const uint16_t* prefix, const DeviceStrokePlan& p, const uint32_t* plan, int s,
                                   Owner o, uint32_t (&total)[kRun]) {
  const int k = p.half_length, step = diagonal_step(p.order[s]);
  simd::diagonal_total<kShared>(prefix, prefix_entry(k, step, o.across + k, o.along0 + k), stroke_prefix_pitch(k),
                                plan, p.begin[s], p.begin[s + 1], total);
}

}  // namespace sp::pencil::gpu::stroke
