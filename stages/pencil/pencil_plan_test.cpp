// The CUDA walk of the line kernels (StrokePlan), modelled on the CPU: every
// direction's response equals the integer convolution with the kernel's own
// taps, also at the largest values (where the float partials must be flushed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "stages/pencil/pencil_stroke_plan.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

// Direct integer response of direction d at (x, y) of a value grid.
uint64_t direct_response(const LineKernelSet& k, int d, const std::vector<float>& v, int gw, int x, int y) {
  uint64_t sum = 0;
  for (int i = k.begin[d]; i < k.begin[d + 1]; ++i) {
    const LineRun& r = k.runs[i];
    for (int j = 0; j < r.len; ++j)
      sum += uint64_t(k.weights[r.offset + j]) * uint64_t(v[size_t(y + r.lo + j) * gw + (x + r.dx)]);
  }
  return sum;
}

TEST(PencilPlan, ChunkedFloatResponsesEqualIntegerConvolution) {
  const uint64_t seed = test::fresh_seed();
  std::mt19937_64 rng(seed);
  struct Case { int half, width; };
  for (const Case c : {Case{1, 0}, Case{5, 1}, Case{18, 0}, Case{18, 1}, Case{32, 1}, Case{36, 3}, Case{64, 0},
                       Case{64, 3}}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " half " << c.half << " width " << c.width);
    const LineKernelSet k = build_line_kernels(c.half, c.width);
    const StrokePlan plan = build_stroke_plan(k);
    EXPECT_EQ(plan.pitch % 2, 1);
    size_t nonzero = 0;
    for (uint8_t wgt : k.weights) nonzero += wgt != 0;
    EXPECT_EQ(plan.taps_per_output, double(nonzero));  // every tap planned once
    // Every direction appears once in the order.
    std::vector<int> seen(kDirections, 0);
    for (int s = 0; s < kDirections; ++s) ++seen[plan.order[s]];
    EXPECT_EQ(seen, std::vector<int>(kDirections, 1));
    const int side = 2 * c.half + 1 + 8, gw = side;
    for (int trial = 0; trial < 3; ++trial) {
      // Trial 0: all 511 (the flush bound's worst case); then random gradients.
      std::vector<float> v(size_t(side) * side);
      std::uniform_int_distribution<int> value(0, kGradientMask);
      for (float& f : v) f = trial == 0 ? float(kGradientMask) : float(value(rng));
      for (int s = 0; s < kDirections; ++s)
        for (int y = c.half; y < side - c.half; y += 3)
          for (int x = c.half; x < side - c.half; x += 3)
            ASSERT_EQ(uint64_t(stroke_plan_response(plan, s, v.data(), gw, x, y)),
                      direct_response(k, plan.order[s], v, gw, x, y))
                << "direction " << int(plan.order[s]) << " at " << x << "," << y;
    }
  }
}

// Every record reads tile values only inside the halo: taps [along, along + size)
// relative to each output, along and across within [-k, k]. A chunk longer than
// the kernel side once read one value before the halo (uninitialised shared
// memory, times a zero weight: NaN now and then, on 3x3 and 7x7 kernels).
TEST(PencilPlan, RecordsReadOnlyInsideTheHalo) {
  for (int half = 1; half <= kMaxHalfLength; half += half < 12 ? 1 : 13)
    for (int width = 0; width <= kMaxHalfWidth; ++width) {
      SCOPED_TRACE(testing::Message() << "half " << half << " width " << width);
      const StrokePlan plan = build_stroke_plan(build_line_kernels(half, width));
      for (size_t i = 0; i < plan.words.size(); i += kPlanRecordWords) {
        int offset, size;
        std::memcpy(&offset, &plan.words[i], 4);
        std::memcpy(&size, &plan.words[i + 1], 4);
        const int across = int(std::floor((offset + plan.pitch / 2.0) / plan.pitch));
        const int along = offset - across * plan.pitch;
        const int taps = size < 0 ? -size : size;
        EXPECT_GE(across, -half);
        EXPECT_LE(across, half);
        EXPECT_GE(along, -half);
        EXPECT_LE(along + taps - 1, half);
        EXPECT_TRUE(size == 1 || size == 2 || size == 4 || size == 8 || size < 0) << size;
      }
    }
}

}  // namespace
}  // namespace sp::pencil
