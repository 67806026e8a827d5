// CUDA classify and draw kernels with the 22.5 degree lines on int8 tensor
// cores (forced on), against the CPU implementation's direct convolutions:
// bit-exact (skipped without a GPU).
#include <gtest/gtest.h>

#include <random>

#include "stages/pencil/pencil_gpu_kernel_test_util.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using gpu_test::expect_stroke_kernels_match_cpu;

TEST(PencilGpu, TensorCoreDirectionsAreBitExact) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = test::fresh_seed();
  std::mt19937_64 rng(seed);
  struct Case { int w, h, half, width; };
  // 18, 32, 36: the bench sizes' defaults; 64 x 3: several K blocks per line and the largest sums;
  // 1 and 5: forced where the cost model would not pick them.
  for (const Case c : {Case{333, 217, 18, 1}, Case{300, 200, 32, 1}, Case{270, 150, 36, 1}, Case{257, 190, 64, 3},
                       Case{97, 61, 1, 2}, Case{130, 70, 5, 0}})
    for (int variant = 0; variant < 3; ++variant)
      for (int trial = 0; trial < 3; ++trial) {  // 0: all 255, 1: sparse, 2: random
        // 22.5 degree lines on tensor cores with the 45 degree ones as running sums or dp4a; or all six on them.
        const DiagonalMode diagonal = variant == 1 ? DiagonalMode::never : DiagonalMode::automatic;
        const MmaMode mma = variant == 2 ? MmaMode::always_all : MmaMode::always;
        SCOPED_TRACE(testing::Message() << "seed " << seed << " " << c.w << "x" << c.h << " half " << c.half
                                        << " width " << c.width << " variant " << variant << " trial " << trial);
        std::vector<uint16_t> grad(size_t(c.w) * c.h);
        for (uint16_t& g : grad)
          g = trial == 0 ? uint16_t(kGradientMask)
                         : (trial == 1 && rng() % 4 ? 0 : uint16_t(rng() % (kGradientMask + 1)));
        const LineKernelSet k1 = build_line_kernels(c.half, 0), k2 = build_line_kernels(c.half, c.width);
        const StrokePlan p1 = build_stroke_plan(k1, diagonal, mma), p2 = build_stroke_plan(k2, diagonal, mma);
        ASSERT_EQ(p1.mma_begin, kDirections - (variant == 2 ? 6 : 4));
        ASSERT_EQ(p2.mma_begin, kDirections - (variant == 2 ? 6 : 4));
        expect_stroke_kernels_match_cpu(grad, c.w, c.h, k1, k2, p1, p2);
      }
}

// The stage's plans at the bench sizes' line lengths (1080p 37, 2560x1920 65,
// 4K 73) on the H100: all six non-axis lines on the tensor cores where that
// keeps the kernel's shared-memory layout (blocks per SM, staging), else the
// 22.5 degree ones (the 2560x1920 draw kernel: its class words would leave
// shared memory); never a worse layout than the plan without tensor cores.
TEST(PencilGpu, TensorCoresKeepTheLayoutAtBenchSizes) {
  SP_REQUIRE_CUDA();
  for (int half : {18, 32, 36})
    for (int width : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "half " << half << " width " << width);
      const bool draw = width == 1;
      const LineKernelSet k = build_line_kernels(half, width);
      const StrokePlan chosen = gpu::choose_stroke_plan(k, draw, MmaMode::automatic);
      const StrokePlan all = build_stroke_plan(k, DiagonalMode::automatic, MmaMode::automatic);
      const StrokePlan odd = build_stroke_plan(k, DiagonalMode::automatic, MmaMode::automatic_odd);
      EXPECT_TRUE(gpu::stroke_layout_at_least(chosen, build_stroke_plan(k), draw));
      EXPECT_EQ(chosen.words, gpu::stroke_layout_at_least(all, odd, draw) ? all.words : odd.words);
      EXPECT_EQ(chosen.mma_begin, draw && half == 32 ? kDirections - 4 : kDirections - 6);
    }
}

}  // namespace
}  // namespace sp::pencil
