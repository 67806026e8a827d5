// The star construction (the GPU mesh's algorithm, run here on the CPU)
// against the incremental triangulation (itself tested against CGAL) and
// against the Delaunay definition.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "stages/lowpoly/lowpoly_test_util.h"
#include "stages/lowpoly/lowpoly_star_mesh.h"
#include "tests/support/test_support.h"

namespace sp::lowpoly {
namespace {

using test::fresh_seed;

void expect_same_as_incremental(const std::vector<uint32_t>& pts, int w, int h, int cell, const std::string& what) {
  std::vector<Triangle> star, incremental;
  StarMesh s;
  ASSERT_TRUE(s.triangulate(pts, w, h, star, cell)) << what;
  Delaunay d;
  ASSERT_TRUE(d.triangulate(pts, w, h, incremental)) << what;
  EXPECT_EQ(oracle::canonical(star), oracle::canonical(incremental)) << what;
}

TEST(LowpolyStar, RandomPointsGiveTheIncrementalMesh) {
  std::mt19937_64 rng(fresh_seed());
  oracle::for_random_point_sets(rng, [](const std::vector<uint32_t>& pts, int w, int h, int cell,
                                        const std::string& what) {
    expect_same_as_incremental(pts, w, h, cell, what);
    std::vector<Triangle> star;
    StarMesh s;
    ASSERT_TRUE(s.triangulate(pts, w, h, star, cell));
    if (w * h < 20000) oracle::expect_valid_delaunay(pts, star, w, h);
  });
}

// Lattices: every cell of points is co-circular; the perturbation decides.
TEST(LowpolyStar, DegenerateGridsGiveTheIncrementalMesh) {
  std::mt19937_64 rng(fresh_seed());
  for (int trial = 0; trial < 10; ++trial) {
    const int w = 4 + int(rng() % 60), h = 4 + int(rng() % 60), step = 1 + int(rng() % 6);
    const std::vector<uint32_t> pts = oracle::grid_points(w, h, step);
    expect_same_as_incremental(pts, w, h, int(rng() % 8), "grid step " + std::to_string(step));
    std::vector<Triangle> star;
    StarMesh s;
    ASSERT_TRUE(s.triangulate(pts, w, h, star));
    oracle::expect_valid_delaunay(pts, star, w, h);
  }
}

// A few interior points under a dense border: rings of hundreds of vertices
// and circumcircles far larger than the grid cells.
TEST(LowpolyStar, SparseInteriorUnderADenseBorder) {
  std::mt19937_64 rng(fresh_seed());
  for (int trial = 0; trial < 6; ++trial) {
    const int w = 100 + int(rng() % 400), h = 50 + int(rng() % 300);
    const std::vector<uint32_t> pts = oracle::random_points(w, h, int(rng() % 5), 2, rng);
    expect_same_as_incremental(pts, w, h, 0, "sparse " + std::to_string(w) + "x" + std::to_string(h));
  }
}

TEST(LowpolyStar, FullHdVertexSetGivesTheIncrementalMesh) {
  std::mt19937_64 rng(fresh_seed());
  const std::vector<uint32_t> pts = oracle::random_points(1920, 1080, 10368, 14, rng);
  expect_same_as_incremental(pts, 1920, 1080, 0, "1920x1080");
  StarMesh s;
  std::vector<Triangle> star;
  ASSERT_TRUE(s.triangulate(pts, 1920, 1080, star));
  RecordProperty("in_circle_tests_per_vertex", std::to_string(double(s.tests()) / double(pts.size())));
  std::printf("in-circle tests per vertex: %.1f, most for one vertex: %lld\n", double(s.tests()) / double(pts.size()),
              (long long)s.max_vertex_tests());
}

// The stage's own vertices (edge-weighted) on a photo-like frame: same mesh.
TEST(LowpolyStar, StageVerticesGiveTheIncrementalMesh) {
  std::mt19937_64 rng(fresh_seed());
  const test::HostImage in = test::synthetic_photo(1920, 1080, rng);
  auto stage = testing::make_stage();
  const auto clip = testing::run_clip_cpu(*stage, {in});
  std::set<uint32_t> vertex_set;
  for (const Triangle& t : clip.meshes[0]) vertex_set.insert(t.a), vertex_set.insert(t.b), vertex_set.insert(t.c);
  const std::vector<uint32_t> pts(vertex_set.begin(), vertex_set.end());
  StarMesh s;
  std::vector<Triangle> star;
  ASSERT_TRUE(s.triangulate(pts, 1920, 1080, star));
  EXPECT_EQ(oracle::canonical(star), oracle::canonical(clip.meshes[0]));
  std::printf("stage vertices: %zu, in-circle tests per vertex: %.1f, most for one vertex: %lld\n", pts.size(),
              double(s.tests()) / double(pts.size()), (long long)s.max_vertex_tests());
}

}  // namespace
}  // namespace sp::lowpoly
