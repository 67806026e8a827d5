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
