// CUDA classify and draw kernels with the 45/135 degree lines as diagonal
// running sums (forced on), and with them forced off, against the CPU
// implementation's direct convolutions: bit-exact (skipped without a GPU).
#include <gtest/gtest.h>

#include <random>

#include "stages/pencil/pencil_gpu_kernel_test_util.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using gpu_test::expect_stroke_kernels_match_cpu;

TEST(PencilGpu, DiagonalRunsAreBitExact) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = test::fresh_seed();
  std::mt19937_64 rng(seed);
  struct Case { int w, h, half, width; };
  // 18 and 32: the 1080p and 2560x1920 defaults; 64 x 3: the prefix tile is larger than tile + exchange;
  // 1: forced where the cost model would not pick it.
  for (const Case c : {Case{333, 217, 18, 1}, Case{300, 200, 32, 1}, Case{257, 190, 64, 3}, Case{97, 61, 1, 2},
                       Case{130, 70, 5, 0}})
    for (DiagonalMode mode : {DiagonalMode::always, DiagonalMode::never})
      for (int sparse = 0; sparse < 2; ++sparse) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << " " << c.w << "x" << c.h << " half " << c.half
                                        << " width " << c.width << " diagonal " << (mode == DiagonalMode::always)
                                        << " sparse " << sparse);
        std::vector<uint16_t> grad(size_t(c.w) * c.h);
        for (uint16_t& g : grad) g = sparse && rng() % 4 ? 0 : uint16_t(rng() % (kGradientMask + 1));
        const LineKernelSet k1 = build_line_kernels(c.half, 0), k2 = build_line_kernels(c.half, c.width);
        const StrokePlan p1 = build_stroke_plan(k1, mode), p2 = build_stroke_plan(k2, mode);
        ASSERT_EQ(p1.diagonal_begin, mode == DiagonalMode::always ? kDirections - 2 : kDirections);
        expect_stroke_kernels_match_cpu(grad, c.w, c.h, k1, k2, p1, p2);
      }
}

// At the bench sizes' line lengths (1080p 37, 2560x1920 65, 4K 73) the
// diagonal runs' prefix tile costs neither kernel any blocks per SM nor any
// staging (docs/perf.md, pencil v4, computed that for the H100's limits), so
// the stage keeps them.
TEST(PencilGpu, DiagonalRunsKeepTheLayoutAtBenchSizes) {
  SP_REQUIRE_CUDA();
  for (int half : {18, 32, 36})
    for (int width : {0, 1}) {
      const LineKernelSet k = build_line_kernels(half, width);
      const StrokePlan runs = build_stroke_plan(k), without = build_stroke_plan(k, DiagonalMode::never);
      ASSERT_EQ(runs.diagonal_begin, kDirections - 2);
      EXPECT_TRUE(gpu::stroke_layout_at_least(runs, without, width == 1)) << "half " << half << " width " << width;
    }
}

}  // namespace
}  // namespace sp::pencil
