// scale stage on CUDA against the CPU backend: bit-exact for every filter.
#include <gtest/gtest.h>

#include "stages/scale/scale.h"
#include "stages/scale/scale_reference.h"

namespace sp::test {
namespace {

struct Resize {
  int sw, sh, dw, dh;
};
const Resize kResizes[] = {{64, 48, 128, 96},       {37, 23, 111, 69},     {37, 23, 50, 31},
                           {97, 61, 31, 17},        {1, 1, 5, 3},          {5, 3, 1, 1},
                           {320, 240, 33, 7},       {193, 2, 64, 5},       {1920, 1080, 1280, 720},
                           {1280, 720, 3840, 2160}, {256, 224, 1024, 896}, {1919, 1079, 641, 359}};

TEST(ScaleCuda, MatchesCpuBitExact) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed + 30);
  for (ScaleFilter f : {ScaleFilter::nearest, ScaleFilter::bilinear, ScaleFilter::area}) {
    int n = 0;
    for (const Resize r : kResizes) {
      const HostImage in = n++ % 2 ? synthetic_photo(r.sw, r.sh, rng) : random_image(r.sw, r.sh, rng);
      auto cpu_stage = make_scale_to(r.dw, r.dh, f);
      auto gpu_stage = make_scale_to(r.dw, r.dh, f);
      const ImageDiff d = compare(run_stage_cuda(*gpu_stage, in), run_stage_cpu(*cpu_stage, in));
      EXPECT_EQ(d.differing_bytes, 0u) << filter_name(f) << " " << r.sw << "x" << r.sh << " -> " << r.dw << "x" << r.dh
                                       << ": max diff " << d.max_abs << " (seed " << seed << ")";
    }
  }
}

TEST(ScaleCuda, FactorOneIsExactCopy) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed() + 31);
  const HostImage in = random_image(1921, 1081, rng);
  auto stage = make_scale({{"factor", 1.0}});
  EXPECT_EQ(compare(run_stage_cuda(*stage, in), in).differing_bytes, 0u);
}

TEST(ScaleCuda, AreaWithHugeReducedRatioMatchesCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed() + 32);
  const HostImage in = random_image(4513, 4001, rng);
  auto cpu_stage = make_scale_to(3, 2, ScaleFilter::area);
  auto gpu_stage = make_scale_to(3, 2, ScaleFilter::area);
  EXPECT_EQ(compare(run_stage_cuda(*gpu_stage, in), run_stage_cpu(*cpu_stage, in)).differing_bytes, 0u);
}

}  // namespace
}  // namespace sp::test
