// The 45/135 degree lines as running sums along diagonals (StrokePlan's
// diagonal directions): the runs rebuild Lu's kernels exactly, and the GPU's
// arithmetic over a prefix tile equals the direct integer taps of the kernel
// at every output, for every line length and width the stage accepts.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "stages/pencil/pencil_stroke_diagonal.h"
#include "stages/pencil/pencil_stroke_diagonal_plan.h"
#include "stages/pencil/pencil_stroke_plan.h"
#include "stages/pencil/pencil_direct_taps.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using test_oracle::direct_taps;

// Lu's diagonal kernels are, along each diagonal line, one equal-weight core
// with at most one tapered tap at each end: the runs cover every tap once
// with its own weight, at most 3 runs per line.
TEST(PencilDiagonal, RunsRebuildEveryKernel) {
  for (int half = 1; half <= kMaxHalfLength; ++half)
    for (int width = 0; width <= kMaxHalfWidth; ++width) {
      SCOPED_TRACE(testing::Message() << "half " << half << " width " << width);
      const LineKernelSet k = build_line_kernels(half, width);
      const int side = 2 * half + 1;
      for (int d : {2, 6}) {
        const std::vector<int> dense = dense_kernel(k, d);
        std::vector<int> rebuilt(dense.size(), 0);
        std::vector<int> runs_per_line(4 * half + 1, 0);
        for (const DiagonalRun& r : diagonal_runs(dense, half, diagonal_step(d))) {
          ASSERT_GT(r.weight, 0);
          ASSERT_LE(r.lo, r.hi);
          ++runs_per_line[r.line + 2 * half];
          for (int t = r.lo; t <= r.hi; ++t) {
            const int dy = diagonal_step(d) * t + r.line;
            ASSERT_TRUE(t >= -half && t <= half && dy >= -half && dy <= half) << t << "," << dy;
            int& cell = rebuilt[size_t(dy + half) * side + (t + half)];
            ASSERT_EQ(cell, 0) << "tap covered twice at " << t << "," << dy;
            cell = r.weight;
          }
        }
        EXPECT_EQ(rebuilt, dense) << "direction " << d;
        for (int n : runs_per_line) EXPECT_LE(n, 3);
      }
    }
}

// The diagonal path (fill, walk and lookups, as on the GPU; prefix storage
// starts as garbage) equals the direct taps at every output of a tile, on
// random gradients and at the largest values (sums near the 2^16 wrap of the
// prefix entries).
TEST(PencilDiagonal, PrefixPathEqualsDirectTapsForEverySize) {
  const uint64_t seed = test::fresh_seed();
  std::mt19937_64 rng(seed);
  for (int half = 1; half <= kMaxHalfLength; ++half)
    for (int width = 0; width <= kMaxHalfWidth; ++width) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " half " << half << " width " << width);
      const LineKernelSet k = build_line_kernels(half, width);
      const StrokePlan plan = build_stroke_plan(k, DiagonalMode::always);
      ASSERT_EQ(plan.diagonal_begin, kDirections - 2);
      const int side = stroke_tile_side(half);
      std::vector<uint8_t> values(size_t(side) * side);
      std::vector<uint16_t> prefix(stroke_prefix_bytes(half) / 2);
      std::vector<uint32_t> out(kPlanTile * kPlanTile);
      const int trial = int(rng() % 4);  // 0: all 255; else random, sometimes sparse (class-masked tiles)
      for (uint8_t& v : values)
        v = trial == 0 ? uint8_t(kGradientMask) : (trial == 1 && rng() % 8 ? 0 : uint8_t(rng()));
      for (int s = plan.diagonal_begin; s < kDirections; ++s) {
        for (uint16_t& e : prefix) e = uint16_t(rng());
        stroke_plan_diagonal_model(plan, s, values.data(), prefix.data(), out.data());
        for (int y = 0; y < kPlanTile; ++y)
          for (int x = 0; x < kPlanTile; ++x)
            ASSERT_EQ(uint64_t(out[y * kPlanTile + x]), direct_taps(k, plan.order[s], values, side, x + half, y + half))
                << "direction " << int(plan.order[s]) << " at " << x << "," << y << " trial " << trial;
      }
    }
}

// Every lookup of every diagonal record lands inside the prefix tile: on a
// tile pixel or a zero pad entry, for every output of the tile.
TEST(PencilDiagonal, LookupsStayInsideThePrefixTile) {
  for (int half = 1; half <= kMaxHalfLength; half += half < 12 ? 1 : 13)
    for (int width = 0; width <= kMaxHalfWidth; ++width) {
      SCOPED_TRACE(testing::Message() << "half " << half << " width " << width);
      const StrokePlan plan = build_stroke_plan(build_line_kernels(half, width), DiagonalMode::always);
      const int pitch = stroke_prefix_pitch(half), entries = stroke_prefix_rows(half) * pitch;
      const int side = stroke_tile_side(half);
      for (int s = plan.diagonal_begin; s < kDirections; ++s) {
        const int step = diagonal_step(plan.order[s]);
        for (int i = plan.begin[s]; i < plan.begin[s + 1]; i += kDiagonalRecordWords)
          for (int lookup = 0; lookup < 2; ++lookup)
            for (int corner = 0; corner < 4; ++corner) {
              const int x = half + (corner & 1) * (kPlanTile - 1), y = half + (corner >> 1) * (kPlanTile - 1);
              const int entry = prefix_entry(half, step, x, y) + int(plan.words[i + lookup]);
              ASSERT_GE(entry, 0);
              ASSERT_LT(entry, entries);
              const int column = entry % pitch - 1, row = entry / pitch - prefix_row0(step);
              EXPECT_TRUE(column >= -1 && column < side && row >= -1 && row <= side) << column << "," << row;
            }
      }
    }
}

// At the bench sizes' default line lengths (1080p: 37, 2560x1920: 65, 4K: 73)
// the cost model takes the diagonal runs for both kernel sets (classify:
// width 0; draw: the default width 1): the modelled cost drops, and the dp4a
// count by the two diagonal directions' share (over a quarter). Prints the
// per-pixel work for docs/perf.md.
TEST(PencilDiagonal, CostModelTakesRunsAtBenchSizes) {
  struct Size { const char* name; int half; };
  for (const Size size : {Size{"1920x1080", 18}, Size{"2560x1920", 32}, Size{"3840x2160", 36}}) {
    double dots_before = 0, dots_after = 0;
    for (int width : {0, 1}) {
      const LineKernelSet k = build_line_kernels(size.half, width);
      const StrokePlan before = build_stroke_plan(k, DiagonalMode::never);
      const StrokePlan after = build_stroke_plan(k, DiagonalMode::automatic);
      EXPECT_EQ(after.diagonal_begin, kDirections - 2) << size.name << " width " << width;
      EXPECT_LT(after.cost_per_thread, before.cost_per_thread) << size.name << " width " << width;
      EXPECT_EQ(after.taps_per_output, before.taps_per_output);
      std::cout << size.name << " half " << size.half << " width " << width << ": dp4a/px " << before.dots_per_output
                << " -> " << after.dots_per_output << " + " << after.diagonal_runs_per_output
                << " diagonal runs/px; cost/thread " << before.cost_per_thread << " -> " << after.cost_per_thread
                << "; plan words " << before.words.size() << " -> " << after.words.size() << "\n";
      dots_before += before.dots_per_output;
      dots_after += after.dots_per_output;
    }
    EXPECT_LT(dots_after, 0.75 * dots_before) << size.name;
  }
}

}  // namespace
}  // namespace sp::pencil
