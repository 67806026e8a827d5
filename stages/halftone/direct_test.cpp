// The direct-summation baseline (`repulsion: direct`) on the CPU; its CUDA
// side is in direct_gpu_test.cpp.
#include <gtest/gtest.h>

#include <random>

#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_test_util.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

using test::HostImage;

// CPU stage: the direct sum and the fast summation move the dots alike.
TEST(HalftoneDirect, StageDirectRepulsionTracksFastsum) {
  std::mt19937_64 rng(test::fresh_seed() + 2);
  const HostImage img = test::synthetic_photo(120, 90, rng);
  Params fast = direct_params(4);
  fast.set("repulsion", std::string("fastsum"));
  HalftoneStage a(parse_halftone_params(direct_params(4))), b(parse_halftone_params(fast));
  test::run_stage_cpu(a, img);
  test::run_stage_cpu(b, img);
  const auto pa = a.particles(), pb = b.particles();
  ASSERT_EQ(pa.size(), pb.size());
  ASSERT_GT(pa.size(), 500u);
  EXPECT_LE(unmatched_dots(pa, pb), int(pa.size() / 200)) << pa.size();
}

}  // namespace
}  // namespace sp::halftone
