// scale stage on the CPU: parameters, output sizes, exact identity, and each
// filter against its float64 model (scale_reference.h).
#include "stages/scale/scale.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "pipeline/scratch.h"
#include "stages/scale/scale_reference.h"

namespace sp::test {
namespace {

constexpr ScaleFilter kFilters[] = {ScaleFilter::nearest, ScaleFilter::bilinear, ScaleFilter::area};

struct Resize {
  int sw, sh, dw, dh;
};
// Upscales, downscales, odd sizes, mixed directions, tiny and extreme ratios.
const Resize kResizes[] = {{64, 48, 128, 96}, {37, 23, 111, 69}, {37, 23, 50, 31}, {64, 48, 32, 24},
                           {97, 61, 31, 17},  {101, 67, 20, 13}, {1, 1, 5, 3},     {5, 3, 1, 1},
                           {320, 240, 33, 7}, {48, 64, 97, 31},  {193, 2, 64, 5},  {2, 193, 7, 60}};

HostImage content(int i, int w, int h, std::mt19937_64& rng) {
  switch (i % 3) {
    case 0:
      return random_image(w, h, rng);
    case 1:
      return synthetic_photo(w, h, rng);
    default:
      return synthetic_pixel_art(w, h, 6, rng);
  }
}

TEST(ScaleParams, TableDeclaresEveryParameterOnce) {
  const StageDescriptor d = make_scale_descriptor();
  ASSERT_EQ(d.params.size(), 4u);
  EXPECT_EQ(d.params[0].name, "width");
  EXPECT_EQ(d.params[1].name, "height");
  EXPECT_EQ(d.params[2].name, "factor");
  EXPECT_EQ(d.params[3].name, "filter");
  EXPECT_EQ(std::get<std::string>(d.params[3].default_value), "bilinear");
  EXPECT_EQ(d.params[3].choices, (std::vector<std::string>{"nearest", "bilinear", "area"}));
  EXPECT_EQ(std::get<double>(d.params[2].default_value), 1.0);
  EXPECT_TRUE(d.params[0].optional_default);
}

TEST(ScaleParams, ValidateRejectsFactorWithSizeNamingFactor) {
  const StageDescriptor d = make_scale_descriptor();
  for (const char* side : {"width", "height"}) {
    Params p = default_params(d.params);
    p.set(side, int64_t(640));
    p.mark_given(side);
    p.set("factor", 2.0);
    p.mark_given("factor");
    const auto problem = d.validate(p);
    ASSERT_TRUE(problem.has_value()) << side;
    EXPECT_EQ(problem->find("factor"), 0u) << *problem;  // the config loader points at the first field named
    EXPECT_NE(problem->find(side), std::string::npos) << *problem;
  }
  // An explicit `factor: 1` next to a size is still two ways of saying the size.
  Params p = default_params(d.params);
  p.set("width", int64_t(640));
  p.mark_given("width");
  p.mark_given("factor");
  EXPECT_TRUE(d.validate(p).has_value());
}

TEST(ScaleParams, ValidateRejectsNonPositiveFactor) {
  const StageDescriptor d = make_scale_descriptor();
  for (double f : {0.0, -0.5}) {
    Params p = default_params(d.params);
    p.set("factor", f);
    p.mark_given("factor");
    const auto problem = d.validate(p);
    ASSERT_TRUE(problem.has_value()) << f;
    EXPECT_NE(problem->find("factor"), std::string::npos);
  }
}

TEST(ScaleParams, ValidateAcceptsEachWayAlone) {
  const StageDescriptor d = make_scale_descriptor();
  EXPECT_FALSE(d.validate(default_params(d.params)).has_value());
  Params size = default_params(d.params);
  size.set("width", int64_t(320));
  size.set("height", int64_t(200));
  EXPECT_FALSE(d.validate(size).has_value());
  Params factor = default_params(d.params);
  factor.set("factor", 0.5);
  factor.mark_given("factor");
  EXPECT_FALSE(d.validate(factor).has_value());
}

// The table and validate as the config loader applies them.
TEST(ScaleParams, ConfigErrorsNameTheField) {
  try {
    parse_config("pipeline:\n  - scale: {width: 640, factor: 2}\n", "t.yaml");
    FAIL() << "width together with factor was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    const std::string m = e.what();
    EXPECT_NE(m.find("t.yaml:2:"), std::string::npos) << m;
    EXPECT_NE(m.find("factor cannot be combined with width or height"), std::string::npos) << m;
  }
  EXPECT_THROW(parse_config("pipeline:\n  - scale: {factor: 0}\n", "t.yaml"), Error);
  EXPECT_THROW(parse_config("pipeline:\n  - scale: {filter: cubic}\n", "t.yaml"), Error);
  EXPECT_THROW(parse_config("pipeline:\n  - scale: {width: -4}\n", "t.yaml"), Error);
  const Config ok = parse_config("pipeline:\n  - scale: {width: 1280, filter: area}\n", "t.yaml");
  ASSERT_EQ(ok.stages.size(), 1u);
  auto stage = make_scale_descriptor().create(ok.stages[0].params);
  struct HostScratch final : ScratchAllocator {
    std::vector<std::vector<uint8_t>> blocks;
    void* allocate(size_t n) override { return blocks.emplace_back(n + 256).data(); }
  } scratch;
  EXPECT_EQ(stage->configure({1920, 1080}, Backend::cpu, scratch), (Size{1280, 720}));
}

TEST(ScaleSize, DerivesMissingSideFromAspectRatio) {
  EXPECT_EQ(scale_output_size({1280, 0, 1, ScaleFilter::bilinear}, {1920, 1080}), (Size{1280, 720}));
  EXPECT_EQ(scale_output_size({0, 720, 1, ScaleFilter::bilinear}, {1920, 1080}), (Size{1280, 720}));
  EXPECT_EQ(scale_output_size({100, 0, 1, ScaleFilter::bilinear}, {3, 2}), (Size{100, 67}));  // 66.67 rounds up
  EXPECT_EQ(scale_output_size({640, 480, 1, ScaleFilter::bilinear}, {1920, 1080}), (Size{640, 480}));
  EXPECT_EQ(scale_output_size({0, 0, 0.5, ScaleFilter::bilinear}, {37, 23}), (Size{19, 12}));  // 18.5, 11.5 round up
  EXPECT_EQ(scale_output_size({0, 0, 3, ScaleFilter::nearest}, {256, 224}), (Size{768, 672}));
  EXPECT_EQ(scale_output_size({0, 0, 0.001, ScaleFilter::area}, {64, 48}), (Size{1, 1}));  // at least one pixel
  EXPECT_THROW(scale_output_size({0, 0, 64, ScaleFilter::area}, {1920, 1080}), Error);
}

TEST(ScaleCpu, FactorOneAndSameSizeAreExactCopies) {
  std::mt19937_64 rng(fresh_seed() + 20);
  for (ScaleFilter f : kFilters) {
    const HostImage in = random_image(37, 23, rng);
    auto by_factor = make_scale({{"factor", 1.0}, {"filter", std::string(filter_name(f))}});
    EXPECT_EQ(compare(run_stage_cpu(*by_factor, in), in).differing_bytes, 0u) << filter_name(f);
    auto by_size = make_scale_to(37, 23, f);
    EXPECT_EQ(compare(run_stage_cpu(*by_size, in), in).differing_bytes, 0u) << filter_name(f);
  }
}

TEST(ScaleCpu, MatchesFloatModel) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed + 21);
  for (ScaleFilter f : kFilters) {
    int worst = 0;
    size_t differing = 0, total = 0;
    int n = 0;
    for (const Resize r : kResizes) {
      const HostImage in = content(n++, r.sw, r.sh, rng);
      auto stage = make_scale_to(r.dw, r.dh, f);
      const HostImage ours = run_stage_cpu(*stage, in);
      ASSERT_EQ(ours.width, r.dw);
      ASSERT_EQ(ours.height, r.dh);
      const ImageDiff d = compare(ours, ref_scale(in, r.dw, r.dh, f));
      // nearest picks whole pixels: exact. bilinear's 11-bit weights and
      // area's exact rational mean differ from float64 only by rounding.
      EXPECT_LE(d.max_abs, f == ScaleFilter::nearest ? 0 : 1)
          << filter_name(f) << " " << r.sw << "x" << r.sh << " -> " << r.dw << "x" << r.dh << " (seed " << seed << ")";
      worst = std::max(worst, d.max_abs);
      differing += d.differing_bytes;
      total += ours.pixels.size();
    }
    std::printf("  %-8s vs float64: max %d, %zu of %zu bytes differ\n", filter_name(f), worst, differing, total);
    EXPECT_LT(double(differing), 0.01 * double(total)) << filter_name(f) << " seed " << seed;
  }
}

TEST(ScaleCpu, IntegerUpscaleReplicatesWithNearestAndArea) {
  std::mt19937_64 rng(fresh_seed() + 22);
  const HostImage in = synthetic_pixel_art(29, 17, 5, rng);
  for (ScaleFilter f : {ScaleFilter::nearest, ScaleFilter::area})
    for (int k : {2, 3, 4}) {
      auto stage = make_scale({{"factor", double(k)}, {"filter", std::string(filter_name(f))}});
      const HostImage out = run_stage_cpu(*stage, in);
      ASSERT_EQ(out.width, 29 * k);
      for (int y = 0; y < out.height; ++y)
        for (int x = 0; x < out.width; ++x)
          ASSERT_EQ(0, std::memcmp(&out.pixels[(size_t(y) * out.width + x) * 4], ref_px(in, x / k, y / k), 4))
              << filter_name(f) << " x" << k << " at " << x << "," << y;
    }
}

// Ratios whose exact area sums overflow 32 bits take the 64-bit accumulator.
TEST(ScaleCpu, AreaWithHugeReducedRatioUsesWideSums) {
  std::mt19937_64 rng(fresh_seed() + 23);
  const HostImage in = random_image(4513, 4001, rng);  // both prime: nothing reduces
  auto stage = make_scale_to(2, 2, ScaleFilter::area);
  const ImageDiff d = compare(run_stage_cpu(*stage, in), ref_area(in, 2, 2));
  EXPECT_LE(d.max_abs, 1);
}

TEST(ScaleCpu, RejectsViewsOfAnotherSize) {
  auto stage = make_scale_to(16, 8, ScaleFilter::bilinear);
  std::mt19937_64 rng(fresh_seed() + 24);
  const HostImage in = random_image(32, 16, rng);
  (void)run_stage_cpu(*stage, in);
  HostImage wrong(31, 16), out(16, 8);
  EXPECT_THROW(stage->process_cpu(wrong.view(), out.view(), FrameInfo{}), Error);
}

}  // namespace
}  // namespace sp::test
