// The pencil stage end to end on the CPU against the float64 reference, and
// the properties the issue asks for (tangent strokes, chroma, CG residual).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pipeline/buffer_pool.h"
#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_cpu.h"
#include "stages/pencil/pencil_math.h"
#include "stages/pencil/pencil_reference.h"
#include "stages/pencil/pencil_solve.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using sp::test::fresh_seed;
using sp::test::HostImage;

struct StrokeRun {
  std::vector<uint8_t> luma, median;
  std::vector<uint16_t> gradient, classified;
  std::vector<uint32_t> sp;
  uint32_t range[2] = {0, 0};
};

StrokeRun run_stroke(const HostImage& img, GradientForm form, int half, int width) {
  StrokeRun s;
  const size_t n = size_t(img.width) * img.height;
  s.luma.resize(n);
  s.median.resize(n);
  s.gradient.resize(n);
  s.classified.resize(n);
  s.sp.resize(n);
  cpu::RowScratch rows;
  rows.resize(std::min(img.height, 5), img.width);
  uint32_t counts[256];
  cpu::luma_histogram(img.view(), s.luma.data(), counts, rows);
  cpu::median_gradient(s.luma.data(), img.width, img.height, form, s.median.data(), s.gradient.data());
  cpu::classify(s.gradient.data(), img.width, img.height, build_line_kernels(half, 0), s.classified.data(), rows);
  cpu::draw(s.classified.data(), img.width, img.height, build_line_kernels(half, width), s.sp.data(), s.range, rows);
  return s;
}

TEST(PencilStroke, ClassesAndSumsEqualFloat64Convolutions) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 3; ++trial) {
    const int w = 20 + int(rng() % 50), h = 15 + int(rng() % 40), half = 1 + int(rng() % 9), width = int(rng() % 3);
    const GradientForm form = trial % 2 ? GradientForm::l2 : GradientForm::l1;
    SCOPED_TRACE(testing::Message() << "seed " << seed << " " << w << "x" << h << " half " << half << " width " << width);
    const HostImage img = trial == 2 ? test::random_image(w, h, rng) : test::synthetic_photo(w, h, rng);
    const StrokeRun s = run_stroke(img, form, half, width);
    const reference::Stroke r = reference::stroke(reference::luma_plane(img), w, h, form, half, width);
    for (size_t i = 0; i < s.sp.size(); ++i) {
      ASSERT_EQ(s.gradient[i], r.gradient[i]) << "pixel " << i;
      ASSERT_EQ(classified_direction(s.classified[i]), r.classes[i]) << "pixel " << i;
      ASSERT_EQ(double(s.sp[i]), r.sp[i]) << "pixel " << i;
    }
    EXPECT_EQ(s.range[0], *std::min_element(s.sp.begin(), s.sp.end()));
    EXPECT_EQ(s.range[1], *std::max_element(s.sp.begin(), s.sp.end()));
    // The stroke map S = (1 - Sp)^gamma lies in [0, 1] and spans it.
    const float gamma = 0.5f + float(rng() % 100) / 40.f;
    float lo = 2, hi = -1;
    for (uint32_t v : s.sp) {
      const float sv = stroke_value(v, float(s.range[0]), float(s.range[1]), gamma);
      lo = std::min(lo, sv);
      hi = std::max(hi, sv);
    }
    EXPECT_EQ(lo, 0.f);
    EXPECT_EQ(hi, 1.f);
  }
}

// A disc's edge is drawn along its tangent: the class at every strong edge
// pixel is the direction closest to the tangent there.
TEST(PencilStroke, DiscDrawsLinesTangentToTheCircle) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const int w = 160, h = 140;
  const double cx = 70 + double(rng() % 20), cy = 60 + double(rng() % 20), radius = 35 + double(rng() % 15);
  HostImage img(w, h);
  std::normal_distribution<double> noise(0, 2);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double d = std::hypot(x + 0.5 - cx, y + 0.5 - cy);
      const double v = 60 + 150 * std::clamp(d - radius + 0.5, 0.0, 1.0) + noise(rng);
      for (int c = 0; c < 3; ++c) img.pixels[(size_t(y) * w + x) * 4 + c] = uint8_t(std::clamp(v, 0.0, 255.0));
      img.pixels[(size_t(y) * w + x) * 4 + 3] = 255;
    }
  const StrokeRun s = run_stroke(img, GradientForm::l1, 7, 1);
  int checked = 0, tangent = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = size_t(y) * w + x;
      if (s.gradient[i] < 40 || std::fabs(std::hypot(x + 0.5 - cx, y + 0.5 - cy) - radius) > 2) continue;
      const double tangent_angle = std::atan2(x + 0.5 - cx, -(y + 0.5 - cy));  // (-dy, dx)
      const double class_angle = classified_direction(s.classified[i]) * M_PI / 8;
      double diff = std::fmod(std::fabs(tangent_angle - class_angle), M_PI);
      diff = std::min(diff, M_PI - diff);
      ++checked;
      if (diff <= M_PI / 8 + 0.05) ++tangent;
    }
  ASSERT_GT(checked, 100) << "seed " << seed;
  EXPECT_GE(tangent, checked * 95 / 100) << "seed " << seed;
  // And the drawn stroke is strongest on the circle, not inside or outside it.
  double on = 0, off = 0;
  int n_on = 0, n_off = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double d = std::fabs(std::hypot(x + 0.5 - cx, y + 0.5 - cy) - radius);
      if (d < 1) on += s.sp[size_t(y) * w + x], ++n_on;
      else if (d > 12 && d < 20) off += s.sp[size_t(y) * w + x], ++n_off;
    }
  EXPECT_GT(on / n_on, 4 * off / n_off) << "seed " << seed;
}

PencilParams random_params(std::mt19937_64& rng, bool color, ToneSolve solve) {
  PencilParams p;
  p.color = color;
  p.tone_solve = solve;
  p.gradient = rng() % 2 ? GradientForm::l2 : GradientForm::l1;
  p.line_length = 5 + 2 * int(rng() % 6);
  p.line_width = int(rng() % 3);
  p.gamma_s = 0.7 + double(rng() % 100) / 50;
  p.gamma_i = 0.4 + double(rng() % 100) / 100;
  const char* presets[] = {"lu2012", "dark", "light"};
  tone_preset(presets[rng() % 3], &p.tone_weights);
  p.cg_tolerance = 1e-6;
  p.cg_max_iterations = 1000;
  return p;
}

TEST(PencilStage, CpuEqualsTheFloat64ReferenceGrayColourFastAndLu2012) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (bool color : {false, true}) {
    for (ToneSolve solve : {ToneSolve::fast, ToneSolve::lu2012}) {
      const PencilParams p = random_params(rng, color, solve);
      const int w = 60 + int(rng() % 60), h = 40 + int(rng() % 50);
      SCOPED_TRACE(testing::Message() << "seed " << seed << " color " << color << " lu2012 "
                                      << (solve == ToneSolve::lu2012) << " " << w << "x" << h);
      const HostImage img = test::synthetic_photo(w, h, rng);
      PencilStage stage(p);
      const HostImage got = test::run_stage_cpu(stage, img);
      const HostImage want = reference::pencil(img, p, fit_texture(builtin_texture(), p.texture_mode, {w, h}));
      const test::ImageDiff d = test::compare(got, want);
      EXPECT_LE(d.max_abs, solve == ToneSolve::fast ? 1 : 2);
      EXPECT_LT(d.differing_bytes, got.pixels.size() / 100);
      if (solve == ToneSolve::lu2012) {
        EXPECT_GT(stage.last_solve().iterations, 0);
        EXPECT_LE(stage.last_solve().relative_residual, 1e-6);
      }
    }
  }
}

TEST(PencilStage, ColourKeepsChromaAndGrayIsGray) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const HostImage img = test::synthetic_photo(120, 90, rng);
  PencilParams p;
  p.color = true;
  PencilStage colour(p);
  const HostImage out = test::run_stage_cpu(colour, img);
  auto chroma = [](const uint8_t* px, double* cb, double* cr) {  // BT.601 full range, exact luma weights
    const double y = (77.0 * px[0] + 150.0 * px[1] + 29.0 * px[2]) / 256;
    *cb = (px[2] - y) / 1.772;
    *cr = (px[0] - y) / 1.402;
  };
  int compared = 0;
  for (size_t i = 0; i < out.pixels.size(); i += 4) {
    const uint8_t* o = &out.pixels[i];
    if (std::min({o[0], o[1], o[2]}) == 0 || std::max({o[0], o[1], o[2]}) == 255) continue;  // clipped
    double cb_in, cr_in, cb_out, cr_out;
    chroma(&img.pixels[i], &cb_in, &cr_in);
    chroma(o, &cb_out, &cr_out);
    ASSERT_NEAR(cb_out, cb_in, 0.5) << "seed " << seed << " pixel " << i / 4;
    ASSERT_NEAR(cr_out, cr_in, 0.5) << "seed " << seed << " pixel " << i / 4;
    EXPECT_EQ(o[3], img.pixels[i + 3]);
    ++compared;
  }
  EXPECT_GT(compared, int(out.pixels.size() / 4 / 5));
  PencilStage gray(PencilParams{});
  const HostImage g = test::run_stage_cpu(gray, img);
  double mean = 0;
  for (size_t i = 0; i < g.pixels.size(); i += 4) {
    ASSERT_EQ(g.pixels[i], g.pixels[i + 1]);
    ASSERT_EQ(g.pixels[i], g.pixels[i + 2]);
    mean += g.pixels[i];
  }
  mean /= double(g.pixels.size() / 4);
  EXPECT_GT(mean, 80);  // a drawing on light paper, not a black frame
}

struct CgProblem {
  int w, h;
  std::vector<uint8_t> luma;
  std::vector<float> ln_j;
  PencilTexture texture;
  BetaSystem system() const {
    BetaSystem s;
    s.width = w;
    s.height = h;
    s.luma = luma.data();
    s.ln_j_by_luma = ln_j.data();
    s.texels = texture.texels.data();
    s.tex_width = texture.width;
    s.tex_height = texture.height;
    s.ln_h_table = texture.ln_table.data();
    s.lambda = 0.2f;
    return s;
  }
};

TEST(PencilSolve, CgSatisfiesTheNormalEquationsAndWarmStartHelps) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  CgProblem prob{70 + int(rng() % 40), 50 + int(rng() % 30), {}, std::vector<float>(256), builtin_texture()};
  const size_t n = size_t(prob.w) * prob.h;
  const HostImage img = test::synthetic_photo(prob.w, prob.h, rng);
  prob.luma = std::vector<uint8_t>(n);
  for (size_t i = 0; i < n; ++i) prob.luma[i] = uint8_t(reference::luma(&img.pixels[4 * i]));
  for (int g = 0; g < 256; ++g) prob.ln_j[g] = float(std::log(std::max(g, 1) / 255.0));
  std::vector<float> x(n), r(n), p0(n), p1(n), q(n);
  std::vector<double> partials(2 * (prob.h / kSolveRowsPerBlock + 1));
  CgVectors v{x.data(), r.data(), {p0.data(), p1.data()}, q.data()};
  const SolveStats cold = solve_beta_cpu(prob.system(), v, partials.data(), false, 1e-5, 2000);
  ASSERT_GT(cold.iterations, 0);
  ASSERT_LE(cold.relative_residual, 1e-5);

  // Float64 check of the normal equations at the float solution, and against the double solve.
  std::vector<double> ln_j(n);
  for (size_t i = 0; i < n; ++i) ln_j[i] = prob.ln_j[prob.luma[i]];
  const std::vector<double> exact = reference::solve_beta(ln_j, prob.texture, prob.w, prob.h, 0.2);
  double res = 0, bb = 0, err = 0, norm = 0;
  for (int y = 0; y < prob.h; ++y)
    for (int xx = 0; xx < prob.w; ++xx) {
      const size_t i = size_t(y) * prob.w + xx;
      const double lh = reference::ln_h(prob.texture, xx, y);
      double ax = lh * lh * x[i];
      if (xx > 0) ax += 0.2 * (double(x[i]) - x[i - 1]);
      if (xx + 1 < prob.w) ax += 0.2 * (double(x[i]) - x[i + 1]);
      if (y > 0) ax += 0.2 * (double(x[i]) - x[i - prob.w]);
      if (y + 1 < prob.h) ax += 0.2 * (double(x[i]) - x[i + prob.w]);
      const double b = lh * ln_j[i];
      res += (ax - b) * (ax - b);
      bb += b * b;
      err += (x[i] - exact[i]) * (x[i] - exact[i]);
      norm += exact[i] * exact[i];
    }
  EXPECT_LE(std::sqrt(res / bb), 3e-5) << "seed " << seed;
  EXPECT_LE(std::sqrt(err / norm), 1e-3) << "seed " << seed;

  // The next frame differs a little: warm start from this beta beats a cold start.
  std::vector<uint8_t> next = prob.luma;
  for (auto& l : next) l = uint8_t(std::clamp(int(l) + int(rng() % 5) - 2, 0, 255));
  prob.luma = next;
  const SolveStats warm = solve_beta_cpu(prob.system(), v, partials.data(), true, 1e-5, 2000);
  std::vector<float> warm_x = x;
  const SolveStats cold2 = solve_beta_cpu(prob.system(), v, partials.data(), false, 1e-5, 2000);
  EXPECT_LT(warm.iterations, cold2.iterations) << "seed " << seed;
  EXPECT_LE(warm.relative_residual, 1e-5);
  double diff = 0, nx = 0;
  for (size_t i = 0; i < n; ++i) diff += (warm_x[i] - x[i]) * (warm_x[i] - x[i]), nx += x[i] * x[i];
  EXPECT_LE(std::sqrt(diff / nx), 1e-3);
}

TEST(PencilStage, TemporalSmoothingIsTemporalAndStable) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  PencilParams p;
  EXPECT_FALSE(PencilStage(p).is_temporal());
  p.temporal_smoothing = 0.9;
  EXPECT_TRUE(PencilStage(p).is_temporal());
  PencilParams solve;
  solve.tone_solve = ToneSolve::lu2012;
  EXPECT_TRUE(PencilStage(solve).is_temporal());
  // Something dark enters the left of the frame: the histogram moves, and
  // without smoothing the untouched right part changes tone (flicker). The
  // EMA keeps most of the previous histogram, so the right part moves less.
  const int w = 120, h = 80;
  const HostImage a = test::synthetic_photo(w, h, rng);
  HostImage b = a;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w * 4 / 10; ++x)
      for (int c = 0; c < 3; ++c) b.pixels[(size_t(y) * w + x) * 4 + c] = uint8_t(b.pixels[(size_t(y) * w + x) * 4 + c] / 6);
  auto right_change = [&](double factor) {
    PencilParams q;
    q.temporal_smoothing = factor;
    q.line_length = 7;
    PencilStage stage(q);
    BufferPool pool;
    PooledScratch scratch(pool, MemoryKind::host);
    stage.configure({w, h}, Backend::cpu, scratch);
    HostImage o1(w, h), o2(w, h);
    stage.process_cpu(a.view(), o1.view(), {0, 0});
    stage.process_cpu(b.view(), o2.view(), {1, 0});
    double s = 0;
    int n = 0;
    for (int y = 0; y < h; ++y)
      for (int x = w / 2 + 8; x < w; ++x, ++n) {
        const size_t i = (size_t(y) * w + x) * 4;
        s += std::abs(int(o1.pixels[i]) - int(o2.pixels[i]));
      }
    return s / n;
  };
  const double without = right_change(0.0), with = right_change(0.9);
  EXPECT_GT(without, 1.0) << "seed " << seed;
  EXPECT_LT(with, 0.5 * without) << "seed " << seed;
}

}  // namespace
}  // namespace sp::pencil
