// The Delaunay triangulation against its definition: triangle count, area,
// exact pixel coverage, empty circumcircles (with the fixed tie-break), and
// independence of the insertion order.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>

#include "stages/lowpoly/lowpoly.h"
#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "tests/support/test_support.h"

namespace sp::lowpoly {
namespace {

using test::fresh_seed;

TEST(LowpolyMesh, RandomPointsFormAValidDelaunayTriangulation) {
  std::mt19937_64 rng(fresh_seed());
  for (int trial = 0; trial < 20; ++trial) {
    const int w = 8 + int(rng() % 200), h = 8 + int(rng() % 150);
    const int n = int(rng() % 400);
    const std::vector<uint32_t> pts = oracle::random_points(w, h, n, int(2 + rng() % 40), rng);
    std::vector<Triangle> tris;
    Delaunay d;
    ASSERT_TRUE(d.triangulate(pts, w, h, tris));
    oracle::expect_valid_delaunay(pts, tris, w, h);
  }
}

// Lattice points are full of co-circular quadruples: the tie-break decides.
TEST(LowpolyMesh, DegenerateGridsAreTriangulatedUniquely) {
  std::mt19937_64 rng(fresh_seed());
  for (int trial = 0; trial < 6; ++trial) {
    const int w = 16 + int(rng() % 30), h = 16 + int(rng() % 30);
    const int step = 1 + int(rng() % 5);
    std::vector<uint32_t> pts = oracle::grid_points(w, h, step);
    std::vector<Triangle> tris;
    Delaunay d;
    ASSERT_TRUE(d.triangulate(pts, w, h, tris));
    oracle::expect_valid_delaunay(pts, tris, w, h);
    const auto reference = oracle::canonical(tris);
    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      std::shuffle(pts.begin(), pts.end(), rng);
      ASSERT_TRUE(d.triangulate(pts, w, h, tris));
      EXPECT_EQ(oracle::canonical(tris), reference) << "mesh depends on the insertion order";
    }
  }
}

TEST(LowpolyMesh, InsertionOrderDoesNotMatter) {
  std::mt19937_64 rng(fresh_seed());
  const int w = 300, h = 200;
  std::vector<uint32_t> pts = oracle::random_points(w, h, 1500, 10, rng);
  std::vector<Triangle> a, b;
  Delaunay d;
  ASSERT_TRUE(d.triangulate(pts, w, h, a));
  std::shuffle(pts.begin(), pts.end(), rng);
  ASSERT_TRUE(d.triangulate(pts, w, h, b));
  EXPECT_EQ(oracle::canonical(a), oracle::canonical(b));
}

TEST(LowpolyMesh, PerturbedInCircleIsAntisymmetricOnCocircularPoints) {
  // Four corners of random rectangles are co-circular: exactly one diagonal is legal.
  std::mt19937_64 rng(fresh_seed());
  for (int i = 0; i < 200; ++i) {
    const int x0 = int(rng() % 100), y0 = int(rng() % 100), x1 = x0 + 1 + int(rng() % 100), y1 = y0 + 1 + int(rng() % 100);
    const uint32_t a = pack_xy(x0, y0), b = pack_xy(x1, y0), c = pack_xy(x1, y1), d = pack_xy(x0, y1);
    ASSERT_EQ(incircle_sign(a, b, c, d), 0);
    // Diagonal a-c: triangles (a,b,c) and (a,c,d); flip iff d inside (a,b,c).
    // Diagonal b-d: triangles (b,c,d) and (b,d,a); flip iff a inside (b,c,d).
    const bool flip_ac = incircle_perturbed(a, b, c, d) > 0, flip_bd = incircle_perturbed(b, c, d, a) > 0;
    EXPECT_NE(flip_ac, flip_bd) << x0 << "," << y0 << " " << x1 << "," << y1;
  }
}

TEST(LowpolyMesh, RejectsInputsOutsideItsContract) {
  Delaunay d;
  std::vector<Triangle> tris;
  EXPECT_FALSE(d.triangulate({pack_xy(0, 0), pack_xy(10, 0), pack_xy(10, 10)}, 10, 10, tris));  // corner missing
  EXPECT_FALSE(d.triangulate({pack_xy(0, 0), pack_xy(10, 0), pack_xy(10, 10), pack_xy(0, 10), pack_xy(3, 3),
                              pack_xy(3, 3)},
                             10, 10, tris));  // duplicate
  EXPECT_TRUE(tris.empty());
}

}  // namespace
}  // namespace sp::lowpoly

namespace sp::lowpoly {
namespace {

// The strip-parallel triangulation must give the sequential mesh exactly,
// whatever the strip count and margin (tiny margins force retries).
TEST(LowpolyStrips, EqualTheSequentialTriangulation) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int trial = 0; trial < 24; ++trial) {
    const int w = 40 + int(rng() % 600), h = 20 + int(rng() % 300);
    std::vector<uint32_t> pts;
    if (trial % 4 == 3) {
      pts = oracle::grid_points(w, h, 2 + int(rng() % 5));  // co-circular everywhere
    } else {
      // Dense on the left third, sparse elsewhere: circles of very different sizes.
      pts = oracle::random_points(w, h, 0, int(2 + rng() % 30), rng);
      std::set<uint32_t> seen(pts.begin(), pts.end());
      const int n = int(rng() % 2000);
      for (int k = 0; k < n; ++k) {
        const int x = 1 + int(rng() % uint64_t(k % 4 ? std::max(1, w / 3 - 1) : w - 1)), y = 1 + int(rng() % uint64_t(h - 1));
        if (seen.insert(pack_xy(x, y)).second) pts.push_back(pack_xy(x, y));
      }
    }
    std::vector<Triangle> sequential, parallel;
    Delaunay d;
    ASSERT_TRUE(d.triangulate(pts, w, h, sequential));
    StripDelaunay s;
    const int strips = 1 + int(rng() % 32);
    const double margin = 0.05 + 4.0 * double(rng() % 1000) / 1000;
    ASSERT_TRUE(s.triangulate(pts, w, h, strips, margin, parallel)) << strips << " strips, margin " << margin;
    EXPECT_EQ(oracle::canonical(parallel), oracle::canonical(sequential)) << strips << " strips, margin " << margin;
  }
}

TEST(LowpolyStrips, CircleWithinIsExact) {
  // Circle through (0,0), (10,0), (0,10): centre (5,5), radius sqrt(50) ~ 7.07: x in (-2.07, 12.07).
  const uint32_t p = pack_xy(100, 100), q = pack_xy(110, 100), r = pack_xy(100, 110);
  ASSERT_GT(orient(100, 100, 110, 100, 100, 110), 0);
  EXPECT_TRUE(circle_within(p, q, r, 97, true, 113, true));
  EXPECT_FALSE(circle_within(p, q, r, 98, true, 113, true));
  EXPECT_FALSE(circle_within(p, q, r, 97, true, 112, true));
  EXPECT_TRUE(circle_within(p, q, r, 98, false, 112, false));
}

}  // namespace
}  // namespace sp::lowpoly
