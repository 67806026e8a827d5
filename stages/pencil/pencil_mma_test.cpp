// The 22.5 degree lines (and, forced, the 45/135 degree ones) on int8 tensor
// cores (StrokePlan's mma directions):
// the lanes' fragments (built by the GPU's own code, pencil_stroke_mma.h) and
// an mma emulated from the PTX ISA's m16n8k32 layout give the direct integer
// taps of the kernel at every output of a tile, for every line length and
// width the stage accepts; every read stays inside the tile and the record.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>

#include "stages/pencil/pencil_stroke_mma.h"
#include "stages/pencil/pencil_stroke_plan.h"
#include "stages/pencil/pencil_direct_taps.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using test_oracle::direct_taps;

TEST(PencilMma, ModelEqualsDirectTapsForEverySize) {
  const uint64_t seed = test::fresh_seed();
  std::mt19937_64 rng(seed);
  for (int half = 1; half <= kMaxHalfLength; ++half)
    for (int width = 0; width <= kMaxHalfWidth; ++width) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " half " << half << " width " << width);
      const LineKernelSet k = build_line_kernels(half, width);
      // All but the 0 and 90 degree lines (box sums) on the tensor cores.
      const StrokePlan plan = build_stroke_plan(k, DiagonalMode::never, MmaMode::always_all);
      ASSERT_EQ(plan.mma_begin, kDirections - 6);
      for (int s = plan.mma_begin; s < kDirections; ++s) ASSERT_NE(plan.order[s] % 4, 0);
      const int side = stroke_tile_side(half), pitch = plan.pitch;
      std::vector<uint8_t> values(size_t(side) * side);
      const int trial = int(rng() % 4);  // 0: all 255; else random, sometimes sparse (class-masked tiles)
      for (uint8_t& v : values)
        v = trial == 0 ? uint8_t(kGradientMask) : (trial == 1 && rng() % 8 ? 0 : uint8_t(rng()));
      // Both pass layouts, pad and slack bytes random (they meet only zero weights).
      std::vector<uint32_t> rows_storage(stroke_tile_bytes(half) / 4), columns_storage(rows_storage.size());
      for (auto* st : {&rows_storage, &columns_storage})
        for (uint32_t& word : *st) word = uint32_t(rng());
      uint8_t* rows = reinterpret_cast<uint8_t*>(rows_storage.data());
      uint8_t* columns = reinterpret_cast<uint8_t*>(columns_storage.data());
      for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) {
          rows[y * pitch + x] = values[size_t(y) * side + x];
          columns[x * pitch + y] = values[size_t(y) * side + x];
        }
      std::vector<uint32_t> out(kPlanTile * kPlanTile);
      for (int s = plan.mma_begin; s < kDirections; ++s) {
        const bool by_rows = s < plan.mma_column_begin;
        stroke_plan_mma_model(plan, s, by_rows ? rows : columns, out.data());
        for (int along = 0; along < kPlanTile; ++along)
          for (int across = 0; across < kPlanTile; ++across) {
            const int x = half + (by_rows ? along : across), y = half + (by_rows ? across : along);
            ASSERT_EQ(uint64_t(out[along * kPlanTile + across]), direct_taps(k, plan.order[s], values, side, x, y))
                << "direction " << int(plan.order[s]) << (by_rows ? " rows" : " columns") << " at " << x << ","
                << y << " trial " << trial;
          }
      }
    }
}

// Every B word of every lane lies inside the byte tile (stroke_tile_bytes),
// every A word inside its record, and records tile the direction's words.
TEST(PencilMma, ReadsStayInsideTheTileAndTheRecord) {
  for (int half = 1; half <= kMaxHalfLength; ++half)
    for (int width = 0; width <= kMaxHalfWidth; ++width) {
      SCOPED_TRACE(testing::Message() << "half " << half << " width " << width);
      const StrokePlan plan =
          build_stroke_plan(build_line_kernels(half, width), DiagonalMode::never, MmaMode::always_all);
      const int tile_words = stroke_tile_bytes(half) / 4;
      for (int s = plan.mma_begin; s < kDirections; ++s) {
        int i = plan.begin[s];
        while (i < plan.begin[s + 1]) {
          const int offset = int(plan.words[i]), nb = int(plan.words[i + 1]), words = int(plan.words[i + 2]);
          ASSERT_GE(nb, 1);
          ASSERT_LE(nb, kMmaMaxKBlocks);
          ASSERT_EQ(words, mma_record_words(nb));
          ASSERT_EQ(offset % 4, 0);
          int lowest = 1 << 30, highest = -1, weight_lo = 1 << 30, weight_hi = -1;
          for (int quad = 0; quad < kMmaWarpsPerGroup; ++quad)
            for (int block = 0; block < kMmaBlocksN; ++block)
              for (int lane = 0; lane < 32; ++lane) {
                for (int j = 0; j <= 2 * nb + 2; ++j) {
                  const int word = simd::mma_b_word(offset, plan.pitch, quad, block, lane, j);
                  lowest = std::min(lowest, word);
                  highest = std::max(highest, word);
                }
                for (int kb = 0; kb < nb; ++kb) {
                  const int q0 = 16 + 32 * kb + 4 * (lane & 3) - (lane >> 2);
                  weight_lo = std::min(weight_lo, q0 >> 2);
                  weight_hi = std::max(weight_hi, (q0 >> 2) + 7);
                }
              }
          EXPECT_GE(lowest, 0);
          EXPECT_LT(highest, tile_words);
          EXPECT_GE(weight_lo, 0);
          EXPECT_LT(weight_hi, mma_weight_words(nb));
          i += words;
        }
        EXPECT_EQ(i, plan.begin[s + 1]);
      }
    }
}

// At the bench sizes' line lengths (1080p 37, 2560x1920 65, 4K 73) the cost
// model moves all six non-axis directions to the tensor cores in both kernel
// sets (classify: width 0; draw: width 1), and the four 22.5 degree ones when
// asked for those only. Prints the work for docs/perf.md.
TEST(PencilMma, CostModelTakesTensorCoresAtBenchSizes) {
  struct Size { const char* name; int half; };
  for (const Size size : {Size{"1920x1080", 18}, Size{"2560x1920", 32}, Size{"3840x2160", 36}})
    for (int width : {0, 1}) {
      const LineKernelSet k = build_line_kernels(size.half, width);
      const StrokePlan before = build_stroke_plan(k);
      const StrokePlan odd = build_stroke_plan(k, DiagonalMode::automatic, MmaMode::automatic_odd);
      const StrokePlan after = build_stroke_plan(k, DiagonalMode::automatic, MmaMode::automatic);
      EXPECT_EQ(odd.mma_begin, kDirections - 4) << size.name << " width " << width;
      EXPECT_EQ(after.mma_begin, kDirections - 6) << size.name << " width " << width;
      EXPECT_LT(odd.cost_per_thread, before.cost_per_thread);
      EXPECT_LT(after.cost_per_thread, before.cost_per_thread);  // (not always below `odd`: see the plan's 45-degree rule)
      EXPECT_EQ(odd.taps_per_output, before.taps_per_output);
      EXPECT_EQ(after.taps_per_output, before.taps_per_output);
      for (const StrokePlan* p : {&odd, &after})
        std::cout << size.name << " half " << size.half << " width " << width << ": dp4a/px " << before.dots_per_output
                  << " -> " << p->dots_per_output << ", mma/tile " << p->mma_per_tile << " ("
                  << kDirections - p->mma_begin << " directions, " << p->mma_column_begin - p->mma_begin
                  << " on rows); cost/thread " << before.cost_per_thread << " -> " << p->cost_per_thread
                  << "; plan words " << before.words.size() << " -> " << p->words.size() << "\n";
    }
}

}  // namespace
}  // namespace sp::pencil
