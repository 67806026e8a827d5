// The halftone stage on the CPU: dot count and charge neutrality, the
// attraction field against a direct sum, stipples that reproduce the image,
// warm-started video without flicker, points_out, determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>

#include "pipeline/buffer_pool.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_test_util.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

using test::HostImage;

TEST(Halftone, DotCountFollowsInkSumAndChargeIsNeutral) {
  std::mt19937_64 rng(test::fresh_seed());
  const HostImage img = test::synthetic_photo(90, 70, rng);
  Params p = halftone_default_params();
  p.set("iterations", int64_t(0));
  p.set("dots_per_pixel", 0.7);
  HalftoneStage stage(parse_halftone_params(p));
  test::run_stage_cpu(stage, img);
  const double ink = test_ink_sum(img);  // float64, from the BT.709 luma
  const FrameNumbers f = stage.numbers();
  EXPECT_EQ(f.count, std::llround(ink * 0.7));
  EXPECT_NEAR(f.ink_sum, ink, 1e-3);
  // Neutral: the image's total attracting charge lambda * ink equals the dots' charge.
  EXPECT_NEAR(f.lambda * f.ink_sum, double(f.count), 1e-3 * f.count);
  EXPECT_EQ(int(stage.particles().size()), f.count);
}

TEST(Halftone, ExplicitDotCount) {
  std::mt19937_64 rng(test::fresh_seed() + 1);
  const HostImage img = test::synthetic_photo(64, 64, rng);
  Params p = halftone_default_params();
  p.set("iterations", int64_t(3));
  p.set("dots", int64_t(777));
  HalftoneStage stage(parse_halftone_params(p));
  test::run_stage_cpu(stage, img);
  EXPECT_EQ(stage.numbers().count, 777);
  for (const float2& q : stage.particles()) {
    ASSERT_GE(q.x, 0.f);
    ASSERT_LT(q.x, 64.f);
    ASSERT_GE(q.y, 0.f);
    ASSERT_LT(q.y, 64.f);
  }
}

// The pruned transforms at odd, non-square sizes, wide and tall, two frames
// each (the second would see padding the first left non-zero).
TEST(Halftone, AttractionFieldMatchesDirectSum) {
  std::mt19937_64 rng(test::fresh_seed() + 2);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (auto [w, h] : {std::pair{57, 43}, std::pair{39, 65}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    const AttractionPlan plan = make_attraction_plan(w, h);
    AttractionCpu attraction(plan);
    for (const float lambda : {1.5f, 0.6f}) {
      std::vector<float> ink(size_t(w) * h);
      for (auto& v : ink) v = u(rng);
      std::vector<float> fx(ink.size()), fy(ink.size());
      attraction.compute(ink.data(), lambda, fx.data(), fy.data());
      const double error = attraction_error_vs_direct(ink, w, h, lambda, fx, fy, 2, 3);
      std::printf("attraction %dx%d vs direct sum: relative RMS %.3g\n", w, h, error);
      EXPECT_LT(error, 1e-4) << "lambda " << lambda;
    }
  }
}

// What the pruned product relies on: -G_x's and -G_y's spectra are imaginary,
// even (x) and odd (y) in the row frequency, up to FFTW's round-off.
TEST(Halftone, AttractionKernelSpectraAreImaginaryWithMirrorRows) {
  const AttractionPlan p = make_attraction_plan(45, 31);
  const AttractionSpectra s = host_attraction_spectra(p);
  const int columns = p.pw / 2 + 1;
  double peak = 0, real = 0, asymmetry = 0;
  for (int ky = 0; ky < p.ph; ++ky)
    for (int kx = 0; kx < columns; ++kx) {
      const size_t i = size_t(ky) * columns + kx, m = size_t((p.ph - ky) % p.ph) * columns + kx;
      peak = std::max({peak, double(std::abs(s.kx_hat[i])), double(std::abs(s.ky_hat[i]))});
      real = std::max({real, double(std::abs(s.kx_hat[i].real())), double(std::abs(s.ky_hat[i].real()))});
      asymmetry = std::max({asymmetry, double(std::abs(s.kx_hat[i].imag() - s.kx_hat[m].imag())),
                            double(std::abs(s.ky_hat[i].imag() + s.ky_hat[m].imag()))});
    }
  EXPECT_LT(real, 1e-5 * peak);
  EXPECT_LT(asymmetry, 1e-5 * peak);
  const std::vector<float2> rows = imaginary_kernel_rows(p, s);
  ASSERT_EQ(rows.size(), size_t(p.ph / 2 + 1) * columns);
  for (int kx = 0; kx < columns; ++kx) {
    EXPECT_EQ(rows[kx].y, 0.f);  // ky = 0 and ph/2: odd in ky, so zero
    EXPECT_EQ(rows[size_t(p.ph / 2) * columns + kx].y, 0.f);
  }
}

TEST(Halftone, IterationsReproduceTheImage) {
  std::mt19937_64 rng(test::fresh_seed() + 3);
  const HostImage img = test::synthetic_photo(96, 80, rng);
  auto run = [&](int iterations) {
    Params p = halftone_default_params();
    p.set("iterations", int64_t(iterations));
    p.set("dots_per_pixel", 0.5);
    HalftoneStage stage(parse_halftone_params(p));
    return blurred_error(img, test::run_stage_cpu(stage, img), 2.0);
  };
  const double initial = run(0), converged = run(60);
  std::printf("blurred (sigma 2) mean abs ink error: initial %.4f, 60 iterations %.4f\n", initial, converged);
  EXPECT_LT(converged, 0.25 * initial);
  EXPECT_LT(converged, 0.02);
}

TEST(Halftone, StaticClipHasNoFlickerAfterWarmUp) {
  std::mt19937_64 rng(test::fresh_seed() + 4);
  const HostImage img = test::synthetic_photo(80, 64, rng);
  Params p = halftone_default_params();
  p.set("iterations", int64_t(60));
  p.set("video_iterations", int64_t(4));
  HalftoneStage stage(parse_halftone_params(p));
  StageRunner runner(stage, img.width, img.height, Backend::cpu);
  std::vector<HostImage> frames;
  for (int i = 0; i < 12; ++i) frames.push_back(runner.process(img, i));
  const FrameNumbers f = stage.numbers();
  EXPECT_EQ(f.kept, f.count);  // unchanged ink: every dot survives, none is born
  // Against the difference between two independent stipplings of the frame
  // (what per-frame halftoning would flicker by).
  p.set("seed", int64_t(99));
  HalftoneStage other(parse_halftone_params(p));
  const double independent = test::compare(frames[0], test::run_stage_cpu(other, img)).mean_abs;
  const double early = test::compare(frames[0], frames[1]).mean_abs;
  const double late = test::compare(frames[10], frames[11]).mean_abs;
  std::printf("flicker (mean abs, 0..255): independent %.2f, frames 0-1 %.3f, frames 10-11 %.3f\n", independent, early,
              late);
  EXPECT_LT(late, early);
  EXPECT_LT(late, 0.03 * independent);
}

TEST(Halftone, WarmStartFollowsChangingInk) {
  std::mt19937_64 rng(test::fresh_seed() + 5);
  const HostImage a = test::synthetic_photo(72, 60, rng), b = test::synthetic_photo(72, 60, rng);
  Params p = halftone_default_params();
  p.set("iterations", int64_t(20));
  p.set("video_iterations", int64_t(10));
  HalftoneStage stage(parse_halftone_params(p));
  StageRunner runner(stage, a.width, a.height, Backend::cpu);
  runner.process(a, 0);
  const HostImage out = runner.process(b, 1);
  const FrameNumbers f = stage.numbers();
  EXPECT_EQ(f.count, std::llround(test_ink_sum(b) * 0.25));
  EXPECT_LT(f.kept, f.count + 1);
  EXPECT_LT(blurred_error(b, out, 2.0), 0.1);
}

TEST(Halftone, PointsOutWritesEveryDot) {
  std::mt19937_64 rng(test::fresh_seed() + 6);
  const HostImage img = test::synthetic_photo(50, 40, rng);
  const auto dir = std::filesystem::temp_directory_path() / ("halftone_points_" + std::to_string(test::fresh_seed()));
  std::filesystem::create_directories(dir);
  for (const char* ext : {".svg", ".csv"}) {
    Params p = halftone_default_params();
    p.set("iterations", int64_t(2));
    p.set("points_out", (dir / (std::string("dots_%03d") + ext)).string());
    HalftoneStage stage(parse_halftone_params(p));
    test::run_stage_cpu(stage, img, 7);
    std::ifstream file(dir / (std::string("dots_007") + ext));
    ASSERT_TRUE(file.good()) << ext;
    std::stringstream text;
    text << file.rdbuf();
    const std::string s = text.str();
    const std::string unit = std::string(ext) == ".svg" ? "<circle" : "\n";
    size_t n = 0;
    for (size_t at = s.find(unit); at != std::string::npos; at = s.find(unit, at + 1)) ++n;
    EXPECT_EQ(int(n) - (std::string(ext) == ".csv" ? 1 : 0), stage.numbers().count) << ext;
  }
  std::filesystem::remove_all(dir);
}

TEST(Halftone, SameSeedSameResult) {
  std::mt19937_64 rng(test::fresh_seed() + 7);
  const HostImage img = test::synthetic_photo(64, 48, rng);
  Params p = halftone_default_params();
  p.set("iterations", int64_t(15));
  HalftoneStage a(parse_halftone_params(p)), b(parse_halftone_params(p));
  EXPECT_EQ(test::compare(test::run_stage_cpu(a, img), test::run_stage_cpu(b, img)).differing_bytes, 0u);
  p.set("seed", int64_t(2));
  HalftoneStage c(parse_halftone_params(p));
  EXPECT_GT(test::compare(test::run_stage_cpu(a, img), test::run_stage_cpu(c, img)).differing_bytes, 0u);
}

// The render reads only the cells a disc reaches from each pixel: every pixel
// equals the scan of all dots (one cell holding them all, in the same order),
// to the bit, at random cell sizes and dot radii, dots crowding the edges.
TEST(Halftone, RenderOfTheReachableCellsEqualsTheScanOfAllDots) {
  std::mt19937_64 rng(test::fresh_seed() + 31);
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  for (int round = 0; round < 4; ++round) {
    const int w = 60 + int(rng() % 80), h = 40 + int(rng() % 60), count = 300 + int(rng() % 900);
    FastsumSettings fs;
    fs.near_radius_px = 3.0 + 6.0 * unit(rng);
    const FastsumPlan plan = make_fastsum_plan(w, h, fs);
    FastsumCpu fastsum(plan, count);
    std::vector<float2> pos(count);
    for (float2& q : pos) {
      // A quarter of the dots within a pixel of an edge.
      const bool edge = rng() % 4 == 0;
      q = make_float2(edge && rng() % 2 ? (rng() % 2 ? unit(rng) : w - unit(rng) - 1e-3f) : unit(rng) * (w - 1e-3f),
                      edge && rng() % 2 ? (rng() % 2 ? unit(rng) : h - unit(rng) - 1e-3f) : unit(rng) * (h - 1e-3f));
    }
    fastsum.sort(pos.data(), count);
    RenderParams r;
    r.radius = 0.5f + 2.5f * unit(rng);
    r.dot[0] = 40, r.dot[1] = 90, r.dot[2] = 10;
    const int one_cell[2] = {0, count};
    int differing = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const CellGrid cell_table{fastsum.cell_start().data(), plan.cells_x, plan.cells_y, plan.cell_w, plan.cell_h};
        const uint32_t cells = render_pixel(x, y, pos.data(), cell_table, r);
        const uint32_t all = render_pixel(x, y, pos.data(), CellGrid{one_cell, 1, 1, float(w), float(h)}, r);
        differing += cells != all;
      }
    EXPECT_EQ(differing, 0) << w << "x" << h << ", " << count << " dots, cells " << plan.cells_x << "x" << plan.cells_y
                            << ", radius " << r.radius;
  }
}

}  // namespace
}  // namespace sp::halftone
