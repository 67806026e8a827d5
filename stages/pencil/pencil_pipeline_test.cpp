// The pencil stage end to end on the CPU against the float64 reference, and
// the properties the issue asks for (tangent strokes, chroma, CG residual).
#include <algorithm>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pipeline/buffer_pool.h"
#include "pipeline/errors.h"
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
  // Pencil's paper is white: clipped pixels are left out. In 300 random
  // photos 17% or more were left to compare (SP_TEST_SEED=69066826480816:
  // 17.1%), so a tenth still says the check ran on the picture.
  EXPECT_GT(compared, int(out.pixels.size() / 4 / 10)) << "seed " << seed;
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
  float lambda = 0.2f;
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
    s.lambda = lambda;
    return s;
  }
  std::vector<double> ln_j_per_pixel() const {
    std::vector<double> out(luma.size());
    for (size_t i = 0; i < luma.size(); ++i) out[i] = ln_j[luma[i]];
    return out;
  }
};

// A photo-like problem with ln J of the raw luma (never all zero: the photo is never constant).
CgProblem photo_problem(int w, int h, std::mt19937_64& rng) {
  CgProblem prob{w, h, std::vector<uint8_t>(size_t(w) * h), std::vector<float>(256), builtin_texture()};
  const HostImage img = test::synthetic_photo(w, h, rng);
  for (size_t i = 0; i < prob.luma.size(); ++i) prob.luma[i] = uint8_t(reference::luma(&img.pixels[4 * i]));
  for (int g = 0; g < 256; ++g) prob.ln_j[g] = float(std::log(std::max(g, 1) / 255.0));
  return prob;
}

// The next frame differs a little (luma noise of +-2).
void next_frame(CgProblem& prob, std::mt19937_64& rng) {
  for (auto& l : prob.luma) l = uint8_t(std::clamp(int(l) + int(rng() % 5) - 2, 0, 255));
}

struct CgWorkspace {
  std::vector<std::vector<float>> fields;
  std::vector<double> partials;
  CgVectors v;
  CgWorkspace(int w, int h) : fields(8, std::vector<float>(size_t(w) * h)), partials(solve_partials_count(h)) {
    v = CgVectors{fields[0].data(), fields[1].data(), fields[2].data(), fields[3].data(),
                  fields[4].data(), fields[5].data(), {fields[6].data(), fields[7].data()}};
  }
  SolveStats solve(const CgProblem& prob, bool warm, double tolerance, int max_iterations = 2000) {
    return solve_beta_cpu(prob.system(), v, partials.data(), warm, tolerance, max_iterations);
  }
  std::vector<double> x() const { return {fields[0].begin(), fields[0].end()}; }
};

// ||b - A x|| / ||b|| in float64.
double true_relative_residual(const CgProblem& prob, const std::vector<double>& ln_j, const float* x) {
  double res = 0, bb = 0;
  const double lambda = prob.lambda;
  for (int y = 0; y < prob.h; ++y)
    for (int xx = 0; xx < prob.w; ++xx) {
      const size_t i = size_t(y) * prob.w + xx;
      const double lh = reference::ln_h(prob.texture, xx, y);
      double ax = lh * lh * x[i];
      if (xx > 0) ax += lambda * (double(x[i]) - x[i - 1]);
      if (xx + 1 < prob.w) ax += lambda * (double(x[i]) - x[i + 1]);
      if (y > 0) ax += lambda * (double(x[i]) - x[i - prob.w]);
      if (y + 1 < prob.h) ax += lambda * (double(x[i]) - x[i + prob.w]);
      const double b = lh * ln_j[i];
      res += (ax - b) * (ax - b);
      bb += b * b;
    }
  return std::sqrt(res / bb);
}

double relative_error(const float* x, const std::vector<double>& exact) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    err += (x[i] - exact[i]) * (x[i] - exact[i]);
    norm += exact[i] * exact[i];
  }
  return std::sqrt(err / norm);
}

TEST(PencilSolve, CgSatisfiesTheNormalEquationsAndWarmStartHelps) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  CgProblem prob = photo_problem(70 + int(rng() % 40), 50 + int(rng() % 30), rng);
  CgWorkspace ws(prob.w, prob.h);
  const SolveStats cold = ws.solve(prob, false, 1e-5);
  ASSERT_GT(cold.iterations, 0);
  ASSERT_LE(cold.relative_residual, 1e-5);

  // Float64 check of the normal equations at the float solution, and against the double solve.
  const std::vector<double> ln_j = prob.ln_j_per_pixel();
  const std::vector<double> exact = reference::solve_beta(ln_j, prob.texture, prob.w, prob.h, prob.lambda);
  EXPECT_LE(true_relative_residual(prob, ln_j, ws.v.x), 3e-5) << "seed " << seed;
  EXPECT_LE(relative_error(ws.v.x, exact), 1e-3) << "seed " << seed;

  // The next frame differs a little: warm start from this beta beats a cold start.
  next_frame(prob, rng);
  const SolveStats warm = ws.solve(prob, true, 1e-5);
  const std::vector<double> warm_x = ws.x();
  const SolveStats cold2 = ws.solve(prob, false, 1e-5);
  EXPECT_LT(warm.iterations, cold2.iterations) << "seed " << seed;
  EXPECT_LE(warm.relative_residual, 1e-5);
  double diff = 0, nx = 0;
  for (size_t i = 0; i < warm_x.size(); ++i) diff += (warm_x[i] - ws.v.x[i]) * (warm_x[i] - ws.v.x[i]), nx += ws.v.x[i] * ws.v.x[i];
  EXPECT_LE(std::sqrt(diff / nx), 1e-3);
}

// v3: the Chebyshev-preconditioned single-reduction CG reaches the float64
// oracle's solution and the residual it reports, in far fewer iterations than
// plain Jacobi-PCG on the same problem from the same start (cold and warm).
TEST(PencilSolve, ChebyshevCgBeatsJacobiPcgAndReachesTheOracle) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  CgProblem prob = photo_problem(120 + int(rng() % 100), 80 + int(rng() % 80), rng);
  prob.lambda = float(0.05 + double(rng() % 100) / 200);  // 0.05 .. 0.55 around the default 0.2
  SCOPED_TRACE(testing::Message() << "seed " << seed << " " << prob.w << "x" << prob.h << " lambda " << prob.lambda);
  CgWorkspace ws(prob.w, prob.h);
  for (bool warm : {false, true}) {
    if (warm) next_frame(prob, rng);
    const std::vector<double> ln_j = prob.ln_j_per_pixel();
    const std::vector<double> start = warm ? ws.x() : std::vector<double>(ln_j.size(), 0.0);
    const double tolerance = 1e-5;
    const SolveStats got = ws.solve(prob, warm, tolerance);
    const int jacobi = reference::jacobi_pcg_iterations(ln_j, prob.texture, prob.w, prob.h, prob.lambda, start,
                                                        tolerance, 5000);
    SCOPED_TRACE(testing::Message() << "warm " << warm << ": " << got.iterations << " iterations, Jacobi-PCG "
                                    << jacobi);
    ASSERT_GT(got.iterations, 0);
    // Three Chebyshev steps cut the iterations about threefold at lambda 0.2
    // (less where a small lambda leaves Jacobi little to do): 2/3 is the bar.
    EXPECT_LE(3 * got.iterations, 2 * jacobi);
    // The stopping rule: the recurrence's residual, and the true one stays close to it in float.
    EXPECT_LE(got.relative_residual, tolerance);
    EXPECT_LE(true_relative_residual(prob, ln_j, ws.v.x), 3 * tolerance);
    const std::vector<double> exact = reference::solve_beta(ln_j, prob.texture, prob.w, prob.h, prob.lambda);
    EXPECT_LE(relative_error(ws.v.x, exact), 1e-3);
  }
}

// CG needs M symmetric positive definite: (M a, b) = (a, M b) up to float
// round-off and (M a, a) > 0, also for the checkerboard, the mode an
// odd-degree Neumann series would null.
TEST(PencilSolve, ChebyshevPreconditionerIsSymmetricPositiveDefinite) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  CgProblem prob = photo_problem(40 + int(rng() % 40), 30 + int(rng() % 30), rng);
  CgWorkspace ws(prob.w, prob.h);
  const size_t n = size_t(prob.w) * prob.h;
  std::normal_distribution<float> normal(0.f, 1.f);
  auto apply = [&](const std::vector<float>& in) {
    std::copy(in.begin(), in.end(), ws.v.r);
    apply_preconditioner_cpu(prob.system(), ws.v);
    return std::vector<float>(ws.v.u, ws.v.u + n);
  };
  auto dot = [&](const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += double(a[i]) * b[i];
    return s;
  };
  std::vector<float> a(n), b(n), checker(n);
  for (size_t i = 0; i < n; ++i) a[i] = normal(rng), b[i] = normal(rng);
  for (int y = 0; y < prob.h; ++y)
    for (int x = 0; x < prob.w; ++x) checker[size_t(y) * prob.w + x] = (x + y) % 2 ? 1.f : -1.f;
  const std::vector<float> ma = apply(a), mb = apply(b), mc = apply(checker);
  const double scale = std::sqrt(dot(ma, ma) * dot(b, b));
  EXPECT_NEAR(dot(ma, b), dot(a, mb), 1e-5 * scale) << "seed " << seed;
  EXPECT_GT(dot(ma, a), 0) << "seed " << seed;
  EXPECT_GT(dot(mb, b), 0) << "seed " << seed;
  // The checkerboard is an eigenvector-like mode near the top of D^-1 A's
  // spectrum: M keeps a fair share of it (Jacobi alone gives 1/diag).
  EXPECT_GT(dot(mc, checker), 0.1 * double(n) / (prob.lambda * 4 + 30)) << "seed " << seed;
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

// A batch worker's kept stage goes on to the next clip: after
// forget_history its next frame must be a fresh stage's first, bit for bit
// (the EMA of the histogram and stroke range, lu2012's warm start).
TEST(PencilStage, ForgetHistoryMakesTheNextFrameAFirstFrame) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const int w = 96, h = 64;
  const HostImage earlier = test::synthetic_photo(w, h, rng), later = test::synthetic_photo(w, h, rng);
  for (const ToneSolve solve : {ToneSolve::fast, ToneSolve::lu2012}) {
    PencilParams p;
    p.temporal_smoothing = 0.8;
    p.tone_solve = solve;
    p.color = true;
    BufferPool pool;
    auto first_frame = [&](PencilStage& stage, const HostImage& in) {
      HostImage out(w, h);
      stage.process_cpu(in.view(), out.view(), {0, 0});
      return out;
    };
    PencilStage fresh(p), kept(p);
    PooledScratch fresh_scratch(pool, MemoryKind::host), kept_scratch(pool, MemoryKind::host);
    fresh.configure({w, h}, Backend::cpu, fresh_scratch);
    kept.configure({w, h}, Backend::cpu, kept_scratch);
    const HostImage expected = first_frame(fresh, later);
    first_frame(kept, earlier);
    first_frame(kept, earlier);
    EXPECT_GT(test::compare(first_frame(kept, later), expected).differing_bytes, 0u)
        << "the state of earlier frames changes a frame (seed " << seed << ")";
    EXPECT_TRUE(kept.forget_history());
    EXPECT_EQ(test::compare(first_frame(kept, later), expected).differing_bytes, 0u) << "seed " << seed;
  }
}

// The state a run built on the CPU while the GPU started goes over to the
// GPU's stage (Stage::take_history). Here both are CPU stages: the taker's
// frames must be those of the stage that ran all of them (the CUDA side is
// PencilGpu.TheGpuTakesTheCpusStateOverBitForBit).
TEST(PencilStage, TakeHistoryGoesOnFromTheOtherStagesFrames) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const int w = 80 + int(rng() % 60), h = 50 + int(rng() % 40);
  std::vector<HostImage> frames;
  for (int f = 0; f < 5; ++f) frames.push_back(test::synthetic_photo(w, h, rng));
  PencilParams p;
  p.temporal_smoothing = 0.5 + double(rng() % 45) / 100;
  p.color = rng() % 2 == 1;
  p.line_length = 7;
  const size_t handover = 1 + rng() % 3;
  SCOPED_TRACE(testing::Message() << "seed " << seed << " " << w << "x" << h << " handover at frame " << handover);
  BufferPool pool;
  PencilStage whole(p), first(p), taker(p);
  PooledScratch a(pool, MemoryKind::host), b(pool, MemoryKind::host), c(pool, MemoryKind::host);
  whole.configure({w, h}, Backend::cpu, a);
  first.configure({w, h}, Backend::cpu, b);
  taker.configure({w, h}, Backend::cpu, c);
  EXPECT_TRUE(whole.hands_history_over());
  auto run = [&](PencilStage& stage, size_t f) {
    HostImage out(w, h);
    stage.process_cpu(frames[f].view(), out.view(), {int64_t(f), 0});
    return out;
  };
  for (size_t f = 0; f < handover; ++f) run(first, f);
  taker.take_history(first);
  for (size_t f = 0; f < frames.size(); ++f) {
    const HostImage expected = run(whole, f);
    if (f >= handover) {
      EXPECT_EQ(test::compare(run(taker, f), expected).differing_bytes, 0u) << "frame " << f;
    }
  }
  PencilStage cold(p);
  PooledScratch d(pool, MemoryKind::host);
  cold.configure({w, h}, Backend::cpu, d);
  PencilStage again(p);
  PooledScratch e(pool, MemoryKind::host);
  again.configure({w, h}, Backend::cpu, e);
  for (size_t f = 0; f < handover; ++f) run(again, f);
  EXPECT_GT(test::compare(run(cold, handover), run(again, handover)).differing_bytes, 0u)
      << "the earlier frames' state changes the frame at the handover";

  PencilParams solve = p;
  solve.tone_solve = ToneSolve::lu2012;
  EXPECT_FALSE(PencilStage(solve).hands_history_over()) << "the backends' CG solutions differ";
  PencilStage lu(solve);
  PooledScratch g(pool, MemoryKind::host);
  lu.configure({w, h}, Backend::cpu, g);
  EXPECT_THROW(lu.take_history(first), Error);
}

}  // namespace
}  // namespace sp::pencil
