// The mesh against an independent exact Delaunay triangulation: CGAL's
// Delaunay_triangulation_2 (exact predicates; co-circular points resolved by
// its symbolic perturbation). Compiled only where CGAL is installed
// (stage.cmake defines SP_LOWPOLY_HAVE_CGAL); the GPU machine has none.
#ifdef SP_LOWPOLY_HAVE_CGAL
#include <CGAL/Delaunay_triangulation_2.h>
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <algorithm>
#include <gtest/gtest.h>

#include <random>

#include "stages/lowpoly/lowpoly.h"
#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "stages/lowpoly/lowpoly_squares_mesh.h"
#include "stages/lowpoly/lowpoly_star_mesh.h"
#include "tests/support/test_support.h"

namespace sp::lowpoly {
namespace {

using Kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using Cgal = CGAL::Delaunay_triangulation_2<Kernel>;

std::vector<std::array<uint32_t, 3>> cgal_triangles(const std::vector<uint32_t>& pts) {
  Cgal dt;
  for (uint32_t p : pts) dt.insert(Kernel::Point_2(oracle::px(p), oracle::py(p)));
  std::vector<Triangle> tris;
  for (auto f = dt.finite_faces_begin(); f != dt.finite_faces_end(); ++f) {
    uint32_t v[3];
    for (int i = 0; i < 3; ++i) v[i] = pack_xy(int(f->vertex(i)->point().x()), int(f->vertex(i)->point().y()));
    tris.push_back({v[0], v[1], v[2]});  // CGAL faces are counter-clockwise, as ours
  }
  return oracle::canonical(tris);
}

// All of our constructions: the host's incremental one, the GPU's star
// construction and the squares route (JFA + squares + repair; both run here on
// the CPU from the GPU's headers).
void expect_same_as_cgal(std::vector<uint32_t> pts, int w, int h, std::mt19937_64& rng) {
  std::vector<Triangle> incremental, star;
  Delaunay d;
  ASSERT_TRUE(d.triangulate(pts, w, h, incremental));
  StarMesh s;
  ASSERT_TRUE(s.triangulate(pts, w, h, star));
  std::vector<Triangle> squares;
  SquaresMesh q;
  ASSERT_TRUE(q.triangulate(pts, w, h, squares));
  std::shuffle(pts.begin(), pts.end(), rng);  // CGAL's insertion order differs from ours
  const auto reference = cgal_triangles(pts);
  EXPECT_EQ(oracle::canonical(incremental), reference) << w << "x" << h << ", " << pts.size() << " points";
  EXPECT_EQ(oracle::canonical(star), reference) << "star: " << w << "x" << h << ", " << pts.size() << " points";
  EXPECT_EQ(oracle::canonical(squares), reference) << "squares: " << w << "x" << h << ", " << pts.size() << " points";
}

TEST(LowpolyCgal, RandomPointsMatchCgal) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int trial = 0; trial < 20; ++trial) {
    const int w = 8 + int(rng() % 500), h = 8 + int(rng() % 400);
    expect_same_as_cgal(oracle::random_points(w, h, int(rng() % 3000), int(2 + rng() % 50), rng), w, h, rng);
  }
}

TEST(LowpolyCgal, CocircularLatticesMatchCgal) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int trial = 0; trial < 10; ++trial) {
    const int w = 10 + int(rng() % 120), h = 10 + int(rng() % 120);
    expect_same_as_cgal(oracle::grid_points(w, h, 1 + int(rng() % 6)), w, h, rng);
  }
}

// The stage's own vertices on a photo-like frame, full size.
TEST(LowpolyCgal, StageVerticesMatchCgalAt1080p) {
  std::mt19937_64 rng(test::fresh_seed());
  LowpolySettings s;
  s.seed = int64_t(rng() % 100000);
  const FramePlan plan = make_plan(s, {1920, 1080});
  std::vector<uint32_t> pts = plan.border;
  std::set<uint32_t> seen(pts.begin(), pts.end());
  while (pts.size() < plan.border.size() + size_t(plan.expected_points)) {
    const uint32_t p = pack_xy(1 + int(rng() % 1919), 1 + int(rng() % 1079));
    if (seen.insert(p).second) pts.push_back(p);
  }
  expect_same_as_cgal(pts, 1920, 1080, rng);
}

}  // namespace
}  // namespace sp::lowpoly
#endif
