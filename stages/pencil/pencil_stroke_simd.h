#pragma once
// The arithmetic of one StrokePlan direction over a byte tile, compiled by
// nvcc for the stroke kernels and by g++ for the plan's CPU model (tests), so
// the model runs the very instructions of the GPU: 4-way byte dot products
// (dp4a) on windows of tile words re-aligned by funnel shifts, and sliding box
// sums. Values and weights are bytes and sums uint32: every result is the
// integer convolution, exactly.
#include <cstdint>
#include <cstring>

#include "pipeline/hd.h"
#include "stages/pencil/pencil_stroke_plan.h"

// Unrolled by nvcc (the window and accumulators must live in registers); g++ decides for itself.
#if defined(__CUDA_ARCH__)
#define SP_PENCIL_UNROLL _Pragma("unroll")
#else
#define SP_PENCIL_UNROLL
#endif

namespace sp::pencil::simd {

constexpr int kRun = kPlanRun;

// c + the dot product of the four unsigned bytes of a and b.
SP_HD uint32_t dot4(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(a, b, c);
#else
  for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 255u) * ((b >> (8 * i)) & 255u);
  return c;
#endif
}
// The 4 bytes starting `bytes` (1..3) bytes into lo, continuing into hi.
SP_HD uint32_t bytes_from(uint32_t lo, uint32_t hi, int bytes) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, 8 * bytes);
#else
  return uint32_t(((uint64_t(hi) << 32) | lo) >> (8 * bytes));
#endif
}

struct Head {
  int offset, code, word2, word3;  // chunk/box records use the first two; diagonal runs all but word3
};
// Plan words live in shared memory (kShared) or global memory (read-only path).
template <bool kShared>
SP_HD Head load_head(const uint32_t* at) {
#if defined(__CUDA_ARCH__)
  const int4 h = kShared ? *reinterpret_cast<const int4*>(at) : __ldg(reinterpret_cast<const int4*>(at));
  return {h.x, h.y, h.z, h.w};
#else
  Head h;
  std::memcpy(&h, at, sizeof h);
  return h;
#endif
}
template <bool kShared>
SP_HD void load_weights(const uint32_t* at, uint32_t (&w)[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = kShared ? *reinterpret_cast<const uint4*>(at) : __ldg(reinterpret_cast<const uint4*>(at));
  w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
  for (int i = 0; i < 4; ++i) w[i] = at[i];
#endif
}

// A chunk of C taps (C / 4 weight words) at byte `at` of the tile, whose
// alignment at % 4 is S: output r's taps 4g..4g+3 are the 4 bytes at
// at + r + 4g, cut from the window of aligned words by a funnel shift.
// Zero-weight taps past the kernel read tile bytes that the dot product
// multiplies by 0 (integers: harmless, whatever they hold).
template <int C, int S, bool kShared>
SP_HD void chunk(const uint32_t* tile, int at, const uint32_t* record_weights, uint32_t (&acc)[kRun]) {
  constexpr int kGroups = C / 4;
  constexpr int kWords = ((S + C + kRun - 2) >> 2) + 1;  // last byte read: S + kRun - 1 + C - 1
  uint32_t w[4];
  load_weights<kShared>(record_weights, w);
  const uint32_t* row = tile + ((at - S) >> 2);
  uint32_t window[kWords];
SP_PENCIL_UNROLL
  for (int i = 0; i < kWords; ++i) window[i] = row[i];
SP_PENCIL_UNROLL
  for (int g = 0; g < kGroups; ++g)
SP_PENCIL_UNROLL
    for (int r = 0; r < kRun; ++r) {
      const int byte = S + r + 4 * g, q = byte >> 2, shift = byte & 3;
      const uint32_t v = shift == 0 ? window[q] : bytes_from(window[q], window[q + 1], shift);
      acc[r] = dot4(v, w[g], acc[r]);
    }
}

// A run of `length` equal weights: a sliding box sum along the thread's outputs.
SP_HD void box(const uint8_t* tile, int at, int length, uint32_t weight, uint32_t (&acc)[kRun]) {
  uint32_t sum = 0;
  for (int i = 0; i < length; ++i) sum += tile[at + i];
SP_PENCIL_UNROLL
  for (int r = 0; r < kRun; ++r) {
    acc[r] += weight * sum;
    if (r + 1 < kRun) sum += uint32_t(tile[at + r + length]) - uint32_t(tile[at + r]);
  }
}

template <int C, bool kShared>
SP_HD void chunk_aligned(const uint32_t* tile, int at, const uint32_t* weights, uint32_t (&acc)[kRun]) {
  switch (at & 3) {
    case 0: chunk<C, 0, kShared>(tile, at, weights, acc); break;
    case 1: chunk<C, 1, kShared>(tile, at, weights, acc); break;
    case 2: chunk<C, 2, kShared>(tile, at, weights, acc); break;
    default: chunk<C, 3, kShared>(tile, at, weights, acc); break;
  }
}

// One direction's response at the thread's kRun outputs; `base` is the tile
// byte of its first output, records [begin, end) of the plan words.
template <bool kShared>
SP_HD void direction_total(const uint8_t* tile, int base, const uint32_t* plan, int begin, int end,
                           uint32_t (&total)[kRun]) {
  const uint32_t* words = reinterpret_cast<const uint32_t*>(tile);
SP_PENCIL_UNROLL
  for (int r = 0; r < kRun; ++r) total[r] = 0u;
  // Records have a fixed stride: the next header is loaded while this record runs.
  Head head = begin < end ? load_head<kShared>(plan + begin) : Head{0, 0, 0, 0};
  for (int i = begin; i < end; i += kPlanRecordWords) {
    const Head next = i + kPlanRecordWords < end ? load_head<kShared>(plan + i + kPlanRecordWords) : head;
    const uint32_t* weights = plan + i + kPlanHeaderWords;
    const int at = base + head.offset;
    switch (head.code) {
      case 4: chunk_aligned<4, kShared>(words, at, weights, total); break;
      case 8: chunk_aligned<8, kShared>(words, at, weights, total); break;
      case 16: chunk_aligned<16, kShared>(words, at, weights, total); break;
      default: {
        uint32_t w[4];
        load_weights<kShared>(weights, w);
        box(tile, at, -head.code, w[0], total);
        break;
      }
    }
    head = next;
  }
}

}  // namespace sp::pencil::simd
