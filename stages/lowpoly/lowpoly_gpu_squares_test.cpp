// `mesh: squares` on CUDA against the CPU (skipped without a GPU): every
// output byte and every triangle identical to the CPU's squares route (which
// equals the incremental mesh, lowpoly_squares_stage_test.cpp), no fallback,
// and the same repair counters wherever the device stored every known edge.
#include <gtest/gtest.h>

#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "stages/lowpoly/lowpoly_test_util.h"

namespace sp::lowpoly {
namespace {

using test::fresh_seed;
using test::HostImage;
using namespace testing;

const char* const kRepairCounters[] = {"repair_square_triangles",   "repair_dropped_flipped", "repair_dropped_not_delaunay",
                                       "repair_dropped_duplicates", "repair_kept",            "repair_triangles",
                                       "repair_vertices",           "repair_searches"};

// CPU and CUDA with `mesh: squares` (plus `v`) on the clip: frames, meshes, fallbacks, counters.
void expect_same(const std::vector<HostImage>& clip, Values v, const std::string& what, bool force_fallback = false) {
  v.emplace_back("mesh", std::string("squares"));
  auto a = make_stage(v);
  auto b = make_stage(v);
  b->force_mesh_fallback_for_testing(force_fallback);
  std::vector<StageCounters> gpu_counters;
  const ClipResult cpu = run_clip_cpu(*a, clip);
  const ClipResult cuda = run_clip_cuda(*b, clip, [&](const LowpolyStage& s) { gpu_counters.push_back(s.counters()); });
  StageCounters cpu_last = a->counters();
  for (size_t f = 0; f < clip.size(); ++f) {
    const test::ImageDiff d = test::compare(cpu.frames[f], cuda.frames[f]);
    EXPECT_EQ(d.differing_bytes, 0u) << what << ", frame " << f << ": max diff " << d.max_abs;
    EXPECT_EQ(oracle::canonical(cpu.meshes[f]), oracle::canonical(cuda.meshes[f])) << what << ", frame " << f;
  }
  EXPECT_EQ(b->mesh_fallbacks(), force_fallback ? int64_t(clip.size()) : 0) << what;
  EXPECT_EQ(a->mesh_fallbacks(), 0) << what;
  StageCounters g = gpu_counters.back();
  if (force_fallback || g["repair_known_overflow"] > 0 || g["repair_square_overflow"] > 0) return;
  // The CPU reuses an unchanged mesh without rebuilding it; compare single frames only.
  if (clip.size() == 1) {
    for (const char* name : kRepairCounters) EXPECT_EQ(cpu_last[name], g[name]) << what << ": " << name;
  }
  std::printf("%s: CUDA jfa %.3f ms, squares %.3f, certify %.3f, repair %.3f; kept %.0f, repaired %.0f triangles at "
              "%.0f vertices\n", what.c_str(), g["jfa_ms"], g["squares_ms"], g["certify_ms"], g["repair_ms"],
              g["repair_kept"], g["repair_triangles"], g["repair_vertices"]);
}

TEST(LowpolySquaresCuda, MatchesCpuOnPhotos) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const std::vector<Values> settings = {
      {},
      {{"fill", std::string("centroid")}},
      {{"points", int64_t(3000)}, {"edge_weight", 30.0}, {"line_width", 1.5}},
      {{"points_per_mp", 40000.0}, {"border_spacing", int64_t(7)}, {"seed", int64_t(rng() % 100000)}},
  };
  const std::pair<int, int> sizes[] = {{1920, 1080}, {641, 363}, {33, 17}, {1, 1}, {3, 200}};
  for (const auto& [w, h] : sizes)
    for (size_t s = 0; s < settings.size(); ++s)
      expect_same({test::synthetic_photo(w, h, rng)}, settings[s],
                  std::to_string(w) + "x" + std::to_string(h) + " settings " + std::to_string(s));
}

TEST(LowpolySquaresCuda, MatchesCpuOnARealPhotograph) {
  SP_REQUIRE_CUDA();
  const HostImage photo = example_photo();
  for (const Values& v : {Values{}, Values{{"points_per_mp", 30000.0}, {"line_width", 1.0}},
                          Values{{"fill", std::string("centroid")}, {"edge_weight", 40.0}, {"voronoi_check", true}}})
    expect_same({photo}, v, "photo");
}

// Long rings (walked twice by emit), known-edge overflow, very dense vertices.
TEST(LowpolySquaresCuda, MatchesCpuOnExtremeDensities) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const HostImage in = test::synthetic_photo(400, 240, rng);
  for (const Values& v : {Values{{"points", int64_t(3)}, {"border_spacing", int64_t(2)}},
                          Values{{"points", int64_t(40)}, {"border_spacing", int64_t(1)}},
                          Values{{"points_per_mp", 200000.0}}})
    expect_same({in}, v, "extreme density");
}

TEST(LowpolySquaresCuda, MatchesCpuAt4K) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  expect_same({test::synthetic_photo(3840, 2160, rng)}, {}, "3840x2160");
}

TEST(LowpolySquaresCuda, MatchesCpuOnClips) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const auto clip = panning_clip(480, 272, 6, 2, rng);
  expect_same(clip, {{"temporal", true}, {"color_smoothing", 0.7}}, "temporal pan");
  expect_same(clip, {}, "pan");
  const HostImage still = test::synthetic_photo(640, 360, rng);
  expect_same({still, still, still}, {{"temporal", true}}, "static clip");
}

// The safety net keeps its meaning: an uncertified device mesh is replaced by the host's.
TEST(LowpolySquaresCuda, UncertifiedDeviceMeshFallsBackToTheHost) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  expect_same(panning_clip(320, 200, 3, 4, rng), {}, "forced fallback", true);
}

}  // namespace
}  // namespace sp::lowpoly
