// The stage with `mesh: squares` on the CPU backend: the same frames and mesh
// as the default route (incremental insertion), 2n - 2 - h triangles, and
// repair counters that show the repair really runs on real input and agree
// with the Voronoi diagnostic's independent comparison against the exact mesh.
#include <gtest/gtest.h>

#include <set>

#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "stages/lowpoly/lowpoly_test_util.h"

namespace sp::lowpoly {
namespace {

using test::fresh_seed;
using test::HostImage;
using namespace testing;

Values with_squares(Values v) {
  v.emplace_back("mesh", std::string("squares"));
  return v;
}

// Runs the clip through both routes; frames and meshes must be identical.
// Returns the squares stage (its counters are the last frame's).
std::unique_ptr<LowpolyStage> expect_same_as_star(const std::vector<HostImage>& clip, const Values& v,
                                                  const std::string& what) {
  auto star = make_stage(v);
  auto squares = make_stage(with_squares(v));
  const ClipResult a = run_clip_cpu(*star, clip);
  const ClipResult b = run_clip_cpu(*squares, clip);
  for (size_t f = 0; f < clip.size(); ++f) {
    EXPECT_EQ(test::compare(a.frames[f], b.frames[f]).differing_bytes, 0u) << what << ", frame " << f;
    EXPECT_EQ(oracle::canonical(a.meshes[f]), oracle::canonical(b.meshes[f])) << what << ", frame " << f;
    std::set<uint32_t> vertices;
    size_t hull = 0;
    for (const Triangle& t : b.meshes[f]) vertices.insert(t.a), vertices.insert(t.b), vertices.insert(t.c);
    for (uint32_t p : vertices) hull += oracle::on_rectangle(p, clip[f].width, clip[f].height);
    EXPECT_EQ(b.meshes[f].size(), 2 * vertices.size() - 2 - hull) << what << ", frame " << f;
  }
  EXPECT_EQ(squares->mesh_fallbacks(), 0) << what << ": the squares route failed and the incremental one ran";
  return squares;
}

TEST(LowpolySquaresStage, RealPhotographGivesTheStarRoutesFramesAndRepairs) {
  const HostImage photo = example_photo();
  for (const Values& v : {Values{}, Values{{"points_per_mp", 30000.0}, {"line_width", 1.0}},
                          Values{{"fill", std::string("centroid")}, {"edge_weight", 40.0}}}) {
    Values checked = v;
    checked.emplace_back("voronoi_check", true);
    auto stage = expect_same_as_star({photo}, checked, "photo");
    StageCounters c = stage->counters();
    // The repair really runs: the squares leave holes and wrong triangles on a real photograph.
    EXPECT_GT(c["repair_triangles"], 0);
    EXPECT_GT(c["repair_vertices"], 0);
    EXPECT_GT(c["repair_kept"], 0);
    EXPECT_GT(c["repair_dropped_flipped"] + c["repair_dropped_not_delaunay"], 0);
    // Against the diagnostic, which looks the square triangles up in the exact mesh.
    EXPECT_EQ(c["repair_square_triangles"], c["square_triangles"]);
    EXPECT_EQ(c["repair_dropped_flipped"], c["square_not_ccw"]);
    EXPECT_EQ(c["repair_kept"] + c["repair_dropped_duplicates"], c["square_delaunay"]);
    EXPECT_EQ(c["repair_kept"], c["square_distinct_delaunay"]);
    EXPECT_EQ(c["repair_triangles"], c["square_missing"]);
    EXPECT_EQ(c["repair_kept"] + c["repair_triangles"], c["triangles"]);
    std::printf("photo %dx%d, %.0f vertices, %.0f triangles: %.0f square triangles, dropped %.0f flipped + %.0f not "
                "Delaunay + %.0f duplicates, kept %.0f, repaired %.0f triangles at %.0f vertices (%.0f searches)\n",
                photo.width, photo.height, c["points"], c["triangles"], c["repair_square_triangles"],
                c["repair_dropped_flipped"], c["repair_dropped_not_delaunay"], c["repair_dropped_duplicates"],
                c["repair_kept"], c["repair_triangles"], c["repair_vertices"], c["repair_searches"]);
  }
}

TEST(LowpolySquaresStage, PhotoLikeFramesOfAllShapesGiveTheStarRoutesFrames) {
  std::mt19937_64 rng(fresh_seed());
  const std::pair<int, int> sizes[] = {{1920, 1080}, {641, 363}, {33, 17}, {1, 1}, {2, 3}, {200, 7}, {3, 200}};
  for (const auto& [w, h] : sizes) {
    const Values v = {{"points_per_mp", double(2000 + rng() % 60000)}, {"seed", int64_t(rng() % 100000)},
                      {"edge_weight", double(rng() % 40)}};
    expect_same_as_star({test::synthetic_photo(w, h, rng)}, v, std::to_string(w) + "x" + std::to_string(h));
  }
  // Extreme densities: a border every 2 pixels around 3 vertices; 200,000 vertices per megapixel.
  expect_same_as_star({test::synthetic_photo(300, 200, rng)}, {{"points", int64_t(3)}, {"border_spacing", int64_t(2)}},
                      "sparse under a dense border");
  expect_same_as_star({test::synthetic_photo(320, 240, rng)}, {{"points_per_mp", 200000.0}}, "dense");
}

TEST(LowpolySquaresStage, ClipsInTemporalModeGiveTheStarRoutesFrames) {
  std::mt19937_64 rng(fresh_seed());
  expect_same_as_star(panning_clip(192, 128, 6, 2, rng), {{"temporal", true}, {"color_smoothing", 0.5}}, "pan");
  const HostImage still = test::synthetic_photo(160, 120, rng);
  auto stage = make_stage(with_squares({}));
  const ClipResult r = run_clip_cpu(*stage, {still, still, still});
  for (size_t f = 1; f < r.frames.size(); ++f)
    EXPECT_EQ(test::compare(r.frames[f], r.frames[0]).differing_bytes, 0u) << "static clip, frame " << f;
}

// The CPU's safety net: a failed squares route is replaced by the incremental mesh, counted.
TEST(LowpolySquaresStage, FailedSquaresRouteFallsBackToTheIncrementalMesh) {
  std::mt19937_64 rng(fresh_seed());
  const auto clip = panning_clip(320, 200, 3, 4, rng);
  auto star = make_stage();
  auto squares = make_stage(with_squares({}));
  squares->force_mesh_fallback_for_testing(true);
  const ClipResult a = run_clip_cpu(*star, clip), b = run_clip_cpu(*squares, clip);
  for (size_t f = 0; f < clip.size(); ++f) {
    EXPECT_EQ(test::compare(a.frames[f], b.frames[f]).differing_bytes, 0u) << "frame " << f;
    EXPECT_EQ(oracle::canonical(a.meshes[f]), oracle::canonical(b.meshes[f])) << "frame " << f;
  }
  EXPECT_EQ(squares->mesh_fallbacks(), 3);
  EXPECT_EQ(squares->counters()["mesh_fallbacks"], 3);
}

}  // namespace
}  // namespace sp::lowpoly
