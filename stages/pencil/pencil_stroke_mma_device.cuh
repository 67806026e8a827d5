#pragma once
// Device side of the tensor-core ("mma") directions of the stroke kernels
// (pencil_stroke.cu only); fragments and layout in pencil_stroke_mma.h.
#include <cstdint>

#include "stages/pencil/pencil_cuda.h"
#include "stages/pencil/pencil_stroke_device.cuh"
#include "stages/pencil/pencil_stroke_mma.h"

namespace sp::pencil::gpu::stroke {

// c += A B on the int8 tensor cores (exact integer sums).
__device__ __forceinline__ void mma_u8(const uint32_t (&a)[4], uint32_t b0, uint32_t b1, uint32_t (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

using MmaAccumulators = uint32_t[kMmaBlocksN][kMmaBlocksM][4];

__device__ __forceinline__ void mma_clear(MmaAccumulators& c) {
#pragma unroll
  for (int nb = 0; nb < kMmaBlocksN; ++nb)
#pragma unroll
    for (int mb = 0; mb < kMmaBlocksM; ++mb)
#pragma unroll
      for (int r = 0; r < 4; ++r) c[nb][mb][r] = 0;
}

// Adds the warp's share of the lines of records [begin, end) (every
// `stride`-th line from `first`) over the byte tile to c.
template <bool kShared>
__device__ void mma_lines(const uint8_t* tile, int pitch, const uint32_t* plan, int begin, int end, int first,
                          int stride, MmaAccumulators& c) {
  const uint32_t* words = reinterpret_cast<const uint32_t*>(tile);
  const int lane = threadIdx.x & 31, quad = (threadIdx.x >> 5) % kMmaWarpsPerGroup;
  int line = 0;
  for (int i = begin; i < end; ++line) {
    const simd::Head head = simd::load_head<kShared>(plan + i);
    if (line % stride == first) {
      const uint32_t* weights = plan + i + kMmaHeaderWords;
      for (int kb = 0; kb < head.code; ++kb) {
        uint32_t a[4];
        simd::mma_a_fragment<kShared>(weights, kb, lane, a);
#pragma unroll
        for (int nb = 0; nb < kMmaBlocksN; ++nb) {
          const int w0 = simd::mma_b_word(head.offset, pitch, quad, nb, lane, 2 * kb);
          uint32_t b[kMmaBlocksM + 1];
#pragma unroll
          for (int j = 0; j <= kMmaBlocksM; ++j) b[j] = words[w0 + 4 * j];
#pragma unroll
          for (int mb = 0; mb < kMmaBlocksM; ++mb) mma_u8(a, b[mb], b[mb + 1], c[nb][mb]);
        }
      }
    }
    i += head.word2;
  }
}

// Hands the warp's accumulators to the exchange (exchange[y * kExchangePitch + x]):
// op(slot, value) per output; `transposed`: column pass (along = y).
template <class Op>
__device__ __forceinline__ void mma_hand_over(const MmaAccumulators& c, uint32_t* exchange, int exchange_pitch,
                                              bool transposed, Op op) {
  const int lane = threadIdx.x & 31, quad = (threadIdx.x >> 5) % kMmaWarpsPerGroup;
#pragma unroll
  for (int nb = 0; nb < kMmaBlocksN; ++nb)
#pragma unroll
    for (int mb = 0; mb < kMmaBlocksM; ++mb)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int along = 16 * mb + (lane >> 2) + (r >= 2 ? 8 : 0);
        const int across = mma_across(quad, nb, 2 * (lane & 3) + (r & 1));
        op(transposed ? along * exchange_pitch + across : across * exchange_pitch + along, c[nb][mb][r]);
      }
}

// Tensor-core directions [first, last) of one pass into the argmax keys in the
// exchange: the two warp groups take alternate directions (each covers the tile).
template <bool kShared>
__device__ void mma_classify(const uint8_t* tile, const DeviceStrokePlan& p, const uint32_t* plan, int first, int last,
                             bool transposed, uint32_t* exchange) {
  const int group = (threadIdx.x >> 5) / kMmaWarpsPerGroup;
  for (int s = first + group; s < last; s += kStrokeThreads / 32 / kMmaWarpsPerGroup) {
    MmaAccumulators c;
    mma_clear(c);
    mma_lines<kShared>(tile, p.pitch, plan, p.begin[s], p.begin[s + 1], 0, 1, c);
    const uint32_t tag = 7u - p.order[s];
    mma_hand_over(c, exchange, kExchangePitch, transposed,
                  [&](int slot, uint32_t total) { atomicMax(exchange + slot, total * 8u + tag); });
  }
}

}  // namespace sp::pencil::gpu::stroke
