#pragma once
// The arithmetic of a tensor-core ("mma") StrokePlan direction, compiled by
// nvcc for the stroke kernels and by g++ for the plan's CPU model.
//
// mma.sync.m16n8k32.row.col.s32.u8.u8.s32: D[16x8] = A[16x32] B[32x8] + C,
// u8 x u8 products summed in int32 (exact: a direction's response is at most
// 255 * 255 * 129 * 9 < 2^31). In the layout of the direction's pass (tile
// row = the "across" coordinate, bytes along it), kernel line a (across offset
// a) has taps e_0..e_{n-1} at along offsets lo..lo+n-1. For 16 outputs along
// (M) and 8 outputs across (N):
//   B[kk][n] = tile byte (row k + across_n + a, column c0 + along0 + 32 b + kk),
//   A[m][kk] = e[32 b + kk - m - s],  c0 = (k + lo) rounded down to 4, s = k + lo - c0,
// over K blocks b = 0..nb-1 (nb = ceil((s + n + 15) / 32)). A depends only on
// the line, so it is read once per line and used for all the warp's blocks.
//
// Fragments (PTX ISA, m16n8k32 with 8-bit A/B): lane = 4 g + t.
//   A: reg 0 = row g,   k 4t..4t+3;  reg 1 = row g+8, k 4t..;  reg 2 = row g, k 16+4t..;  reg 3 = row g+8, k 16+4t..
//   B: reg 0 = column g, k 4t..4t+3; reg 1 = column g, k 16+4t..
//   C: reg 0, 1 = row g, columns 2t, 2t+1; reg 2, 3 = row g+8, columns 2t, 2t+1.
//
// Warp layout: a warp owns 2 N blocks x 4 M blocks (64 along x 16 across).
// Its N blocks take across outputs {32 h + j + 4 n : n = 0..7} (rows 4 apart:
// lane g's tile rows are then 4 g pitch / 4 words apart, conflict-free for any
// odd pitch / 4). Warps 0-3 and 4-7 are two groups that each cover the tile.
//
// Record of a line (16-byte aligned): header {tile byte offset (k + a) * pitch
// + c0, nb, record words, 0}, then 8 nb + 8 words of weight bytes R[q] =
// e[q - 24 - s] (0 outside the line). Lane (g, t) builds its A registers of K
// block b from the 28 bytes R[q0 .. q0 + 27], q0 = 16 + 32 b + 4 t - g: 8 word
// loads and 4 funnel shifts.
#include <cstdint>

#include "pipeline/hd.h"
#include "stages/pencil/pencil_stroke_plan.h"
#include "stages/pencil/pencil_stroke_simd.h"

namespace sp::pencil {

constexpr int kMmaHeaderWords = 4;
constexpr int kMmaBlocksM = 4;       // M blocks (16 along) per warp: the tile's 64
constexpr int kMmaBlocksN = 2;       // N blocks (8 across) per warp
constexpr int kMmaWarpsPerGroup = 4;  // one group of warps covers the tile
constexpr int kMmaMaxKBlocks = 6;    // nb <= ceil((3 + 129 + 15) / 32) = 5
constexpr int kMmaWeightLead = 24;   // R[q] = e[q - kMmaWeightLead - s]

SP_HD int mma_weight_words(int k_blocks) { return 8 * k_blocks + 8; }
SP_HD int mma_record_words(int k_blocks) { return kMmaHeaderWords + mma_weight_words(k_blocks); }
SP_HD int mma_k_blocks(int s, int taps) { return (s + taps + 15 + 31) / 32; }

// Across output of N block `block` (0, 1) of warp quad `quad` (warp & 3), lane group g, column n.
SP_HD int mma_across(int quad, int block, int n) { return 32 * (quad >> 1) + 2 * (quad & 1) + block + 4 * n; }

namespace simd {

// Lane's A registers of K block b from the line's weight words.
template <bool kShared>
SP_HD void mma_a_fragment(const uint32_t* weights, int b, int lane, uint32_t (&a)[4]) {
  const int g = lane >> 2, t = lane & 3;
  const int q0 = 16 + 32 * b + 4 * t - g, first = q0 >> 2, shift = q0 & 3;
  uint32_t w[8];
SP_PENCIL_UNROLL
  for (int i = 0; i < 8; ++i) {
#if defined(__CUDA_ARCH__)
    w[i] = kShared ? weights[first + i] : __ldg(weights + first + i);
#else
    w[i] = weights[first + i];
#endif
  }
  uint32_t window[4];  // bytes q0 + 8 i .. q0 + 8 i + 3
SP_PENCIL_UNROLL
  for (int i = 0; i < 4; ++i) window[i] = bytes_from(w[2 * i], w[2 * i + 1], shift);  // shift 0: w[2 i]
  // Rows g + 8 (reg 1) read 8 bytes earlier than rows g (reg 0); k + 16 (regs 2, 3) 16 bytes later.
  a[0] = window[1];
  a[1] = window[0];
  a[2] = window[3];
  a[3] = window[2];
}

// Tile word of B for lane (g, t): N block `block`, line offset `offset` (bytes),
// word step j = M block + 2 * K block (+ 1 for B's k 16..31).
SP_HD int mma_b_word(int offset, int pitch, int quad, int block, int lane, int j) {
  const int g = lane >> 2, t = lane & 3;
  return (offset + mma_across(quad, block, g) * pitch) / 4 + t + 4 * j;
}

}  // namespace simd
}  // namespace sp::pencil
