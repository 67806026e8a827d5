// The CUDA walk of the line kernels (StrokePlan), modelled on the CPU with the
// GPU's own arithmetic: every direction's response equals the integer
// convolution with the kernel's own taps, at every output of a tile, and every
// record reads inside the block's shared memory.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "stages/pencil/pencil_stroke_diagonal.h"
#include "stages/pencil/pencil_stroke_plan.h"
#include "stages/pencil/pencil_direct_taps.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using test_oracle::direct_taps;

// One plan's responses over whole tiles (the GPU's arithmetic: chunks and
// boxes over byte tiles, diagonal runs over a prefix tile) against the
// integer convolution, on all-255 (largest sums) and random gradients.
void expect_plan_tiles_equal_convolution(const LineKernelSet& k, const StrokePlan& plan, std::mt19937_64& rng) {
  const int half = k.half_length;
  EXPECT_EQ(plan.pitch % 4, 0);
  EXPECT_EQ(plan.pitch / 4 % 2, 1);
  size_t nonzero = 0;
  for (uint8_t wgt : k.weights) nonzero += wgt != 0;
  EXPECT_EQ(plan.taps_per_output, double(nonzero));  // every tap planned once
  std::vector<int> seen(kDirections, 0);
  for (int s = 0; s < kDirections; ++s) ++seen[plan.order[s]];
  EXPECT_EQ(seen, std::vector<int>(kDirections, 1));  // every direction once in the order
  const int side = stroke_tile_side(half), pitch = plan.pitch;
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<int> v(size_t(side) * side);
    for (int& x : v) x = trial == 0 ? int(kGradientMask) : int(rng() % (kGradientMask + 1));
    std::vector<uint32_t> storage(stroke_tile_bytes(half) / 4);  // 4-byte aligned tiles
    std::vector<uint32_t> transposed_storage(storage.size());
    for (auto* st : {&storage, &transposed_storage})
      for (uint32_t& word : *st) word = uint32_t(rng());  // pad and slack hold garbage
    uint8_t* rows = reinterpret_cast<uint8_t*>(storage.data());
    uint8_t* columns = reinterpret_cast<uint8_t*>(transposed_storage.data());
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        rows[y * pitch + x] = uint8_t(v[size_t(y) * side + x]);
        columns[x * pitch + y] = uint8_t(v[size_t(y) * side + x]);
      }
    const std::vector<uint8_t> values(v.begin(), v.end());
    std::vector<uint16_t> prefix(stroke_prefix_bytes(half) / 2, 0x5A5A);  // garbage: the model fills it
    std::vector<uint32_t> out(kPlanTile * kPlanTile);
    for (int s = 0; s < kDirections; ++s) {
      const bool mma = s >= plan.mma_begin;
      const bool by_rows = mma ? s < plan.mma_column_begin : s < plan.row_directions;
      if (mma)
        stroke_plan_mma_model(plan, s, by_rows ? rows : columns, out.data());
      else if (s >= plan.diagonal_begin)  // outputs in the column-pass layout
        stroke_plan_diagonal_model(plan, s, values.data(), prefix.data(), out.data());
      else
        stroke_plan_tile_model(plan, s, by_rows ? rows : columns, out.data());
      for (int along = 0; along < kPlanTile; ++along)
        for (int across = 0; across < kPlanTile; ++across) {
          const int x = half + (by_rows ? along : across), y = half + (by_rows ? across : along);
          ASSERT_EQ(uint64_t(out[along * kPlanTile + across]), direct_taps(k, plan.order[s], v, side, x, y))
              << "direction " << int(plan.order[s]) << " at " << x << "," << y << " trial " << trial;
        }
    }
  }
}

// The CUDA blocks' arithmetic (the plan walked by pencil_stroke_simd.h over a
// byte tile laid out as in shared memory, pad and slack bytes random) equals
// the integer convolution at every output of a tile, also at the largest
// values; with the diagonal runs off, as the cost model picks them, and with
// the tensor-core directions as the cost model picks them.
TEST(PencilPlan, TileResponsesEqualIntegerConvolution) {
  const uint64_t seed = test::fresh_seed();
  std::mt19937_64 rng(seed);
  struct Case { int half, width; };
  for (const Case c : {Case{1, 0}, Case{1, 2}, Case{3, 2}, Case{5, 1}, Case{18, 0}, Case{18, 1}, Case{32, 1},
                       Case{36, 3}, Case{64, 0}, Case{64, 3}})
    for (int variant = 0; variant < 3; ++variant) {
      const DiagonalMode mode = variant == 0 ? DiagonalMode::never : DiagonalMode::automatic;
      const MmaMode mma = variant == 2 ? MmaMode::automatic : MmaMode::never;
      SCOPED_TRACE(testing::Message() << "seed " << seed << " half " << c.half << " width " << c.width
                                      << (variant == 0 ? " no diagonal runs" : " automatic")
                                      << (variant == 2 ? " with tensor cores" : ""));
      const LineKernelSet k = build_line_kernels(c.half, c.width);
      expect_plan_tiles_equal_convolution(k, build_stroke_plan(k, mode, mma), rng);
    }
}

// Every record reads tile values only inside the block's allocation: taps
// start at or after -k (a chunk that started before the halo once read memory
// before the tile), nonzero weights lie inside [-k, k], and overhangs past +k
// (zero weights) stay within the row pitch plus the tile's slack.
TEST(PencilPlan, RecordsReadInsideTheTile) {
  for (int half = 1; half <= kMaxHalfLength; half += half < 12 ? 1 : 13)
    for (int width = 0; width <= kMaxHalfWidth; ++width) {
      SCOPED_TRACE(testing::Message() << "half " << half << " width " << width);
      // Chunk and box records only (never diagonal runs: those are checked in pencil_diagonal_test.cpp).
      const StrokePlan plan = build_stroke_plan(build_line_kernels(half, width), DiagonalMode::never);
      for (size_t i = 0; i < plan.words.size(); i += kPlanRecordWords) {
        const int offset = int(plan.words[i]), size = int(plan.words[i + 1]);
        const int across = int(std::floor((offset + plan.pitch / 2.0) / plan.pitch));
        const int along = offset - across * plan.pitch;
        const int taps = size < 0 ? -size : size;
        EXPECT_GE(across, -half);
        EXPECT_LE(across, half);
        EXPECT_GE(along, -half);
        EXPECT_TRUE(size == 4 || size == 8 || size == 16 || size < 0) << size;
        if (size < 0) {
          EXPECT_LE(along + taps - 1, half);
        }
        for (int j = 0; j < taps && size > 0; ++j) {
          if ((plan.words[i + kPlanHeaderWords + j / 4] >> (8 * (j % 4))) & 255u) {
            EXPECT_LE(along + j, half);
          }
        }
        // The last thread of a tile row reads up to 3 bytes past the window of its
        // kPlanRun outputs (whole words): inside the row pitch, or the slack after the last row.
        EXPECT_LE(kPlanTile + half + along + taps + 2, plan.pitch + kTileSlackBytes);
      }
    }
}

}  // namespace
}  // namespace sp::pencil
