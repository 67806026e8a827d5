// The mma directions of a StrokePlan: records (pencil_stroke_mma.h) and the
// CPU model of a block's tensor-core pass, lane by lane, for the tests.
#include "stages/pencil/pencil_stroke_mma_plan.h"

#include <algorithm>

#include "stages/pencil/pencil_stroke_mma.h"
#include "stages/pencil/pencil_stroke_plan.h"

namespace sp::pencil {

MmaDirection mma_direction(const std::vector<int>& dense, int half_length, int pitch, bool by_rows) {
  const int k = half_length, side = 2 * k + 1;
  MmaDirection out;
  for (int across = -k; across <= k; ++across) {
    auto tap = [&](int along) {
      return by_rows ? dense[size_t(across + k) * side + (along + k)] : dense[size_t(along + k) * side + (across + k)];
    };
    int lo = k + 1, hi = -k - 1;
    for (int along = -k; along <= k; ++along)
      if (tap(along)) lo = std::min(lo, along), hi = std::max(hi, along);
    if (hi < lo) continue;
    const int c0 = (k + lo) & ~3, s = k + lo - c0, taps = hi - lo + 1, nb = mma_k_blocks(s, taps);
    out.words.push_back(uint32_t((k + across) * pitch + c0));
    out.words.push_back(uint32_t(nb));
    out.words.push_back(uint32_t(mma_record_words(nb)));
    out.words.push_back(0);
    // Weight bytes R[q] = e[q - lead - s], e[j] = tap(lo + j).
    for (int word = 0; word < mma_weight_words(nb); ++word) {
      uint32_t packed = 0;
      for (int b = 0; b < 4; ++b) {
        const int j = 4 * word + b - kMmaWeightLead - s;
        if (j >= 0 && j < taps) packed |= uint32_t(tap(lo + j)) << (8 * b);
      }
      out.words.push_back(packed);
    }
    ++out.lines;
    out.k_blocks += nb;
    // Per line and K block, per warp: 8 weight loads + 4 shifts (A), 10 tile
    // loads (B), 8 mma (shared loads and mma counted twice), address work; a
    // line is done by one group of 4 warps, i.e. half the block's threads.
    out.cost_per_thread += 2 + nb * (2 * 8 + 4 + 2 * 10 + 2 * 8 + 8) / 2.0;
  }
  out.cost_per_thread += 30;  // the hand-over: 32 shared atomics per lane, a barrier
  return out;
}

namespace {

// The m16n8k32 operands as matrices, from 32 lanes' registers (PTX ISA layout).
uint32_t byte_of(uint32_t word, int b) { return (word >> (8 * b)) & 255u; }
struct Operands {
  uint32_t a[16][32], b[32][8];
};
void unpack_a(const uint32_t (&a)[32][4], Operands& m) {
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 32; ++col) {
      const int lane = (row % 8) * 4 + (col % 16) / 4, reg = (col >= 16 ? 2 : 0) + (row >= 8 ? 1 : 0);
      m.a[row][col] = byte_of(a[lane][reg], col % 4);
    }
}
void unpack_b(const uint32_t (&b)[32][2], Operands& m) {
  for (int kk = 0; kk < 32; ++kk)
    for (int col = 0; col < 8; ++col) m.b[kk][col] = byte_of(b[col * 4 + (kk % 16) / 4][kk / 16], kk % 4);
}
// D = A B + C for one warp, C/D in the lanes' accumulator layout.
void mma_emulated(const Operands& m, uint32_t (&c)[32][4]) {
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < 4; ++reg) {
      const int row = lane / 4 + (reg >= 2 ? 8 : 0), col = 2 * (lane % 4) + (reg & 1);
      uint32_t sum = 0;
      for (int kk = 0; kk < 32; ++kk) sum += m.a[row][kk] * m.b[kk][col];
      c[lane][reg] += sum;
    }
}

}  // namespace

void stroke_plan_mma_model(const StrokePlan& plan, int order_index, const uint8_t* tile, uint32_t* out) {
  const uint32_t* tile_words = reinterpret_cast<const uint32_t*>(tile);
  std::fill(out, out + kPlanTile * kPlanTile, 0u);
  // One group of 4 warps covers the tile; each walks every line of the direction.
  for (int quad = 0; quad < kMmaWarpsPerGroup; ++quad) {
    uint32_t c[kMmaBlocksN][kMmaBlocksM][32][4] = {};
    for (int i = plan.begin[order_index]; i < plan.begin[order_index + 1];) {
      const simd::Head head = simd::load_head<true>(plan.words.data() + i);
      const uint32_t* weights = plan.words.data() + i + kMmaHeaderWords;
      for (int kb = 0; kb < head.code; ++kb) {
        uint32_t a[32][4];
        Operands m;
        for (int lane = 0; lane < 32; ++lane) simd::mma_a_fragment<true>(weights, kb, lane, a[lane]);
        unpack_a(a, m);
        for (int nb = 0; nb < kMmaBlocksN; ++nb)
          for (int mb = 0; mb < kMmaBlocksM; ++mb) {
            uint32_t b[32][2];
            for (int lane = 0; lane < 32; ++lane)
              for (int r = 0; r < 2; ++r)
                b[lane][r] = tile_words[simd::mma_b_word(head.offset, plan.pitch, quad, nb, lane, mb + 2 * kb + r)];
            unpack_b(b, m);
            mma_emulated(m, c[nb][mb]);
          }
      }
      i += head.word2;
    }
    for (int nb = 0; nb < kMmaBlocksN; ++nb)
      for (int mb = 0; mb < kMmaBlocksM; ++mb)
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < 4; ++reg) {
            const int along = 16 * mb + lane / 4 + (reg >= 2 ? 8 : 0);
            const int across = mma_across(quad, nb, 2 * (lane % 4) + (reg & 1));
            out[along * kPlanTile + across] += c[nb][mb][lane][reg];
          }
  }
}

}  // namespace sp::pencil
