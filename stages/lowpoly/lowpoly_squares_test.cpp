// The `mesh: squares` route (JFA -> 2x2 squares -> keep the certified
// triangles -> repair the holes; the GPU's algorithm, run here on the CPU from
// the same headers) against the incremental triangulation (itself tested
// against CGAL), the Delaunay definition, and the square statistics the
// Voronoi diagnostic measures independently against the exact mesh.
#include <gtest/gtest.h>

#include <random>

#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "stages/lowpoly/lowpoly_squares_mesh.h"
#include "stages/lowpoly/lowpoly_voronoi.h"
#include "tests/support/test_support.h"

namespace sp::lowpoly {
namespace {

using test::fresh_seed;

size_t border_count(const std::vector<uint32_t>& pts, int w, int h) {
  size_t n = 0;
  for (uint32_t p : pts) n += oracle::on_rectangle(p, w, h);
  return n;
}

// The squares mesh equals the incremental one, has 2n - 2 - h triangles, and
// its statistics agree with compare_with_mesh (an independent count of which
// square triangles are in the exact mesh). Returns the statistics.
RepairStats expect_same_as_incremental(const std::vector<uint32_t>& pts, int w, int h, int cell,
                                       const std::string& what) {
  std::vector<Triangle> squares, incremental;
  SquaresMesh s;
  s.set_known_slots(0);  // every known edge: the statistics below are exact
  EXPECT_TRUE(s.triangulate(pts, w, h, squares, cell)) << what;
  Delaunay d;
  EXPECT_TRUE(d.triangulate(pts, w, h, incremental)) << what;
  EXPECT_EQ(oracle::canonical(squares), oracle::canonical(incremental)) << what;
  EXPECT_EQ(squares.size(), 2 * pts.size() - 2 - border_count(pts, w, h)) << what;
  const RepairStats& r = s.stats();
  std::vector<int32_t> square_tris;
  square_triangles_cpu(s.labels(), w, h, square_tris);
  const SquareStats q = compare_with_mesh(pts, square_tris, incremental);
  EXPECT_EQ(r.square_triangles, q.triangles) << what;
  EXPECT_EQ(r.flipped, q.not_ccw) << what;
  EXPECT_EQ(r.certified, q.delaunay) << what << ": kept = counter-clockwise and in the exact mesh";
  EXPECT_EQ(r.kept, q.distinct_delaunay) << what;
  EXPECT_EQ(r.repaired_triangles, q.missing) << what;
  EXPECT_EQ(r.kept + r.repaired_triangles, int(incremental.size())) << what;
  EXPECT_EQ(r.flipped + r.not_delaunay + r.certified, r.square_triangles) << what;
  EXPECT_EQ(r.known_overflow, 0);
  return r;
}

TEST(LowpolySquares, RandomPointsGiveTheIncrementalMesh) {
  std::mt19937_64 rng(fresh_seed());
  oracle::for_random_point_sets(rng, [](const std::vector<uint32_t>& pts, int w, int h, int cell,
                                        const std::string& what) {
    expect_same_as_incremental(pts, w, h, cell, what);
    std::vector<Triangle> squares;
    SquaresMesh s;
    ASSERT_TRUE(s.triangulate(pts, w, h, squares, cell));
    if (w * h < 20000) oracle::expect_valid_delaunay(pts, squares, w, h);
  });
}

// Lattices: every 2x2 cell of points is co-circular, so the squares' diagonals
// disagree with the perturbation's about half the time: many drops and repairs.
TEST(LowpolySquares, DegenerateGridsGiveTheIncrementalMesh) {
  std::mt19937_64 rng(fresh_seed());
  int dropped = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const int w = 4 + int(rng() % 60), h = 4 + int(rng() % 60), step = 1 + int(rng() % 6);
    const std::vector<uint32_t> pts = oracle::grid_points(w, h, step);
    const RepairStats r = expect_same_as_incremental(pts, w, h, int(rng() % 8), "grid step " + std::to_string(step));
    dropped += r.not_delaunay + r.flipped;
    std::vector<Triangle> squares;
    SquaresMesh s;
    ASSERT_TRUE(s.triangulate(pts, w, h, squares));
    oracle::expect_valid_delaunay(pts, squares, w, h);
  }
  EXPECT_GT(dropped, 0) << "lattices must exercise the drop of non-Delaunay square triangles";
}

// A few interior points under a dense border: long rings, huge circumcircles.
TEST(LowpolySquares, SparseInteriorUnderADenseBorder) {
  std::mt19937_64 rng(fresh_seed());
  for (int trial = 0; trial < 6; ++trial) {
    const int w = 100 + int(rng() % 400), h = 50 + int(rng() % 300);
    const std::vector<uint32_t> pts = oracle::random_points(w, h, int(rng() % 5), 2, rng);
    expect_same_as_incremental(pts, w, h, 0, "sparse " + std::to_string(w) + "x" + std::to_string(h));
  }
}

TEST(LowpolySquares, FullHdVertexSetGivesTheIncrementalMeshAndRepairsHoles) {
  std::mt19937_64 rng(fresh_seed());
  const std::vector<uint32_t> pts = oracle::random_points(1920, 1080, 10368, 14, rng);
  const RepairStats r = expect_same_as_incremental(pts, 1920, 1080, 0, "1920x1080");
  EXPECT_GT(r.repaired_triangles, 0) << "the squares alone are expected to leave holes at this density";
  EXPECT_GT(r.repaired_vertices, 0);
  std::printf("1920x1080, %zu points: %d square triangles, dropped %d flipped + %d not Delaunay + %d duplicates, "
              "kept %d, repaired %d triangles at %d vertices (%d searches)\n", pts.size(), r.square_triangles,
              r.flipped, r.not_delaunay, r.certified - r.kept, r.kept, r.repaired_triangles, r.repaired_vertices,
              r.repair_searches);
}

// Fewer known-edge slots than a ring needs (the GPU keeps kKnownSlots): the
// dropped edges are searched instead; the mesh does not change.
TEST(LowpolySquares, KnownEdgeOverflowCostsSearchesNotCorrectness) {
  std::mt19937_64 rng(fresh_seed());
  const std::vector<uint32_t> pts = oracle::random_points(400, 300, 1500, 9, rng);
  std::vector<Triangle> all_known, few_known;
  SquaresMesh a, b;
  a.set_known_slots(0);
  b.set_known_slots(2);
  ASSERT_TRUE(a.triangulate(pts, 400, 300, all_known));
  ASSERT_TRUE(b.triangulate(pts, 400, 300, few_known));
  EXPECT_EQ(oracle::canonical(few_known), oracle::canonical(all_known));
  EXPECT_GT(b.stats().known_overflow, 0);
  EXPECT_EQ(a.stats().known_overflow, 0);
  EXPECT_GT(b.stats().repair_searches, a.stats().repair_searches);
  EXPECT_GT(b.stats().repaired_vertices, a.stats().repaired_vertices);
  EXPECT_EQ(b.stats().kept + b.stats().repaired_triangles, int(all_known.size()));
}

// The GPU files known edges in whatever order its atomics give: any order,
// with any slot count, gives the same mesh; with all edges kept, the same counts.
TEST(LowpolySquares, KnownEdgeOrderDoesNotMatter) {
  std::mt19937_64 rng(fresh_seed());
  for (int trial = 0; trial < 8; ++trial) {
    const int w = 50 + int(rng() % 400), h = 50 + int(rng() % 300);
    const std::vector<uint32_t> pts = oracle::random_points(w, h, int(rng() % 2000), int(2 + rng() % 30), rng);
    std::vector<Triangle> in_order, shuffled, shuffled_capped;
    SquaresMesh a, b, c;
    a.set_known_slots(0), b.set_known_slots(0), c.set_known_slots(int(1 + rng() % 6));
    b.shuffle_known_for_testing(rng() | 1), c.shuffle_known_for_testing(rng() | 1);
    ASSERT_TRUE(a.triangulate(pts, w, h, in_order));
    ASSERT_TRUE(b.triangulate(pts, w, h, shuffled));
    ASSERT_TRUE(c.triangulate(pts, w, h, shuffled_capped));
    EXPECT_EQ(oracle::canonical(shuffled), oracle::canonical(in_order));
    EXPECT_EQ(oracle::canonical(shuffled_capped), oracle::canonical(in_order));
    EXPECT_EQ(b.stats().repair_searches, a.stats().repair_searches);
    EXPECT_EQ(b.stats().repaired_vertices, a.stats().repaired_vertices);
    EXPECT_EQ(b.stats().kept, a.stats().kept);
  }
}

}  // namespace
}  // namespace sp::lowpoly
