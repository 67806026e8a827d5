// The CPU fast summation against the float64 direct sum (the oracle), and
// its pieces (window transform, regularized kernel) against first principles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "stages/halftone/fastsum.h"
#include "stages/halftone/halftone.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

std::vector<float2> uniform_points(int count, int w, int h, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> ux(0.f, float(w) - 1e-3f), uy(0.f, float(h) - 1e-3f);
  std::vector<float2> pts(count);
  for (auto& q : pts) q = make_float2(ux(rng), uy(rng));
  return pts;
}

// Darkness-weighted points on a photo-like image (the stage's input kind).
std::vector<float2> image_points(int count, int w, int h, std::mt19937_64& rng) {
  const test::HostImage img = test::synthetic_photo(w, h, rng);
  std::uniform_real_distribution<float> ux(0.f, float(w) - 1e-3f), uy(0.f, float(h) - 1e-3f), u01(0.f, 1.f);
  std::vector<float2> pts;
  while (int(pts.size()) < count) {
    const float x = ux(rng), y = uy(rng);
    uint32_t px;
    std::memcpy(&px, &img.pixels[(size_t(int(y)) * w + int(x)) * 4], 4);
    if (u01(rng) < pixel_darkness(px)) pts.push_back(make_float2(x, y));
  }
  return pts;
}

struct ErrorReport {
  double relative_rms = 0;
};

// Relative RMS error of the fast forces against the direct sum.
double fast_error(std::vector<float2> pts, int w, int h, int m, int p, double near_px, double sigma = 2.0) {
  FastsumSettings s;
  s.m = m;
  s.p = p;
  s.near_radius_px = near_px;
  s.sigma = sigma;
  const FastsumPlan plan = make_fastsum_plan(w, h, s);
  FastsumCpu fast(plan, int(pts.size()));
  fast.sort(pts.data(), int(pts.size()));
  std::vector<float2> f(pts.size());
  fast.forces(pts.data(), int(pts.size()), f.data());
  std::vector<double> dx(pts.size()), dy(pts.size());
  direct_forces(pts.data(), int(pts.size()), dx.data(), dy.data());
  double num = 0, den = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    num += (f[i].x - dx[i]) * (f[i].x - dx[i]) + (f[i].y - dy[i]) * (f[i].y - dy[i]);
    den += dx[i] * dx[i] + dy[i] * dy[i];
  }
  return std::sqrt(num / den);
}

TEST(HalftoneFastsum, WindowTransformMatchesQuadrature) {
  FastsumSettings s;
  const FastsumPlan plan = make_fastsum_plan(200, 150, s);
  for (int k : {0, 1, plan.N / 7, plan.N / 3, plan.N / 2 - 1}) {
    // c_k = integral over t of phi(t) cos(2 pi k t / n), midpoint rule.
    const int steps = 200000;
    const double m = plan.window.m, dt = 2 * m / steps;
    double sum = 0;
    for (int i = 0; i < steps; ++i) {
      const double t = -m + (i + 0.5) * dt;
      sum += kb_window(plan.window, float(t)) * std::cos(2 * M_PI * k * t / plan.n) * dt;
    }
    EXPECT_NEAR(sum / kb_fourier(plan, k), 1.0, 1e-4) << "k=" << k;
  }
}

TEST(HalftoneFastsum, RegularizedKernelJoinsSmoothly) {
  FastsumSettings s;
  const FastsumPlan plan = make_fastsum_plan(300, 300, s);
  const double e = plan.eps_i, r0 = 0.5 - plan.eps_b, h = 1e-9;
  // Continuous at both joins, equal to 1/r^2 between them, zero beyond 1/2.
  EXPECT_NEAR(regularized_gradient_over_r(plan, e - h) * e * e, 1.0, 1e-5);
  EXPECT_NEAR(regularized_gradient_over_r(plan, r0 + h) * r0 * r0, 1.0, 1e-5);
  EXPECT_DOUBLE_EQ(regularized_gradient_over_r(plan, 0.3 * (e + r0)), 1.0 / std::pow(0.3 * (e + r0), 2));
  EXPECT_NEAR(regularized_gradient_over_r(plan, 0.5 - h), 0.0, 1e-3);
  EXPECT_EQ(regularized_gradient_over_r(plan, 0.6), 0.0);
  // The near-field kernel is the same polynomial in pixel units: it cancels 1/q^2 at q = 1.
  float fx = 0, fy = 0;
  near_correction(plan.near, plan.near.eps * 0.999f, 0.f, fx, fy);
  EXPECT_NEAR(fx * plan.near.eps, 0.0, 1e-2);
}

TEST(HalftoneFastsum, MatchesDirectSumOnUniformPoints) {
  std::mt19937_64 rng(test::fresh_seed());
  for (auto [count, w, h] : {std::tuple{1000, 64, 48}, std::tuple{10000, 200, 120}, std::tuple{30000, 256, 256}}) {
    const double density = double(count) / (w * h), near = std::sqrt(24.0 / (M_PI * density));
    const double err = fast_error(uniform_points(count, w, h, rng), w, h, 5, 5, near);
    EXPECT_LE(err, 1e-3) << count << " points, seed " << test::fresh_seed();
    std::printf("uniform %d points: relative RMS error %.3g\n", count, err);
  }
}

TEST(HalftoneFastsum, MatchesDirectSumOnImagePoints) {
  std::mt19937_64 rng(test::fresh_seed() + 1);
  for (auto [count, w, h] : {std::tuple{3000, 100, 80}, std::tuple{30000, 256, 256}}) {
    const double density = double(count) / (w * h), near = std::sqrt(24.0 / (M_PI * density));
    const double err = fast_error(image_points(count, w, h, rng), w, h, 5, 5, near);
    EXPECT_LE(err, 1e-3) << count << " points, seed " << test::fresh_seed();
    std::printf("image %d points: relative RMS error %.3g\n", count, err);
  }
}

// Cheaper settings (smaller oversampling, larger near field) stay as accurate
// as the seed's sigma = 2 with 24 neighbours, on the same points: the error
// comes from the regularization (p) and float sums, not from the grid.
TEST(HalftoneFastsum, CheaperGridsStayAccurate) {
  std::mt19937_64 rng(test::fresh_seed() + 3);
  const auto pts = image_points(20000, 220, 180, rng);
  const double density = 20000.0 / (220 * 180);
  const auto error_at = [&](double sigma, double neighbours) {
    const double err = fast_error(pts, 220, 180, 5, 5, std::sqrt(neighbours / (M_PI * density)), sigma);
    std::printf("sigma %.2f, %g neighbours: relative RMS error %.3g\n", sigma, neighbours, err);
    return err;
  };
  const double seed_settings = error_at(2.0, 24.0);
  for (auto [sigma, neighbours] :
       {std::pair{1.5, 24.0}, std::pair{1.25, 24.0}, std::pair{1.25, kDefaultNearNeighbours}, std::pair{2.0, 48.0},
        std::pair{1.5, 48.0}}) {
    const double err = error_at(sigma, neighbours);
    EXPECT_LE(err, 1e-3);
    EXPECT_LE(err, 1.5 * seed_settings) << "sigma " << sigma << ", " << neighbours << " neighbours";
  }
}

TEST(HalftoneFastsum, ErrorFallsAsAccuracyRises) {
  std::mt19937_64 rng(test::fresh_seed() + 2);
  const auto pts = image_points(5000, 120, 100, rng);
  const double near = std::sqrt(24.0 / (M_PI * 5000.0 / (120 * 100)));
  double previous = 1e9;
  for (int mp : {3, 5, 7}) {
    const double err = fast_error(pts, 120, 100, mp, mp, near);
    std::printf("m = p = %d: relative RMS error %.3g\n", mp, err);
    EXPECT_LT(err, previous) << "m = p = " << mp;
    previous = err;
  }
}

// The near field reads the 3 x 3 cells around each particle's. The oracle
// sums near_correction over every other particle in the same (sorted)
// order: the cells left out must hold only exact zeros, so the two agree to
// the bit. Particles sit on cell edges, the frame's edges and just inside
// and outside the cut-off.
TEST(HalftoneFastsum, NearFieldOfTheNeighbouringCellsEqualsTheSumOverAllPairs) {
  std::mt19937_64 rng(test::fresh_seed() + 3);
  const int w = 60 + int(rng() % 80), h = 40 + int(rng() % 60);
  FastsumSettings s;
  s.near_radius_px = 2.0 + double(rng() % 400) / 100;
  const FastsumPlan plan = make_fastsum_plan(w, h, s);
  std::vector<float2> pts = uniform_points(int(0.3 * w * h), w, h, rng);
  std::uniform_real_distribution<float> u01(0.f, 1.f), eps_scale(0.995f, 1.005f), before_edge(0.95f, 1.f);
  for (int k = 0; k < 200; ++k) {
    // A pair about eps apart along x or y, across a cell edge.
    const float d = plan.near.eps * eps_scale(rng), along = d * before_edge(rng), across = u01(rng);
    if (rng() % 2) {
      const float edge = plan.cell_w * float(1 + rng() % (plan.cells_x - 1));
      pts.push_back(make_float2(edge - along, across * float(h)));
      pts.push_back(make_float2(edge - along + d, across * float(h)));
    } else {
      const float edge = plan.cell_h * float(1 + rng() % (plan.cells_y - 1));
      pts.push_back(make_float2(across * float(w), edge - along));
      pts.push_back(make_float2(across * float(w), edge - along + d));
    }
    pts.push_back(make_float2(plan.cell_w * float(rng() % plan.cells_x), u01(rng) * float(h)));
    pts.push_back(make_float2(u01(rng) * float(w), rng() % 2 ? 0.f : float(h)));
  }
  for (float2& q : pts) q = make_float2(std::fmin(std::fmax(q.x, 0.f), float(w)), std::fmin(std::fmax(q.y, 0.f), float(h)));
  FastsumCpu fast(plan, int(pts.size()));
  fast.sort(pts.data(), int(pts.size()));
  std::vector<float2> near(pts.size(), make_float2(0.f, 0.f));
  fast.add_near_field(pts.data(), int(pts.size()), near.data());
  size_t pairs = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    float fx = 0.f, fy = 0.f;
    for (size_t j = 0; j < pts.size(); ++j) {
      if (j == i) continue;
      const float dx = pts[i].x - pts[j].x, dy = pts[i].y - pts[j].y;
      pairs += dx * dx + dy * dy < plan.near.eps * plan.near.eps;
      near_correction(plan.near, dx, dy, fx, fy);
    }
    ASSERT_EQ(near[i].x, fx) << "particle " << i << " at (" << pts[i].x << ", " << pts[i].y << "), " << w << "x" << h;
    ASSERT_EQ(near[i].y, fy) << "particle " << i;
  }
  EXPECT_GT(pairs, pts.size()) << "the particles should have neighbours within the cut-off";
}

}  // namespace
}  // namespace sp::halftone
