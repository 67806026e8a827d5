// CUDA against the CPU implementation (skipped without a GPU): every output
// byte and every triangle must be identical, on single frames and on clips.
// The CUDA mesh is the device's own (star construction), the CPU's the host's
// incremental one: two independent constructions of the same unique mesh.
#include <gtest/gtest.h>

#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "stages/lowpoly/lowpoly_test_util.h"

namespace sp::lowpoly {
namespace {

using test::fresh_seed;
using test::HostImage;
using namespace testing;


void expect_same(const ClipResult& cpu, const ClipResult& cuda, const std::string& what) {
  ASSERT_EQ(cpu.frames.size(), cuda.frames.size());
  for (size_t f = 0; f < cpu.frames.size(); ++f) {
    const test::ImageDiff d = test::compare(cpu.frames[f], cuda.frames[f]);
    EXPECT_EQ(d.differing_bytes, 0u) << what << ", frame " << f << ": max diff " << d.max_abs;
    EXPECT_EQ(oracle::canonical(cpu.meshes[f]), oracle::canonical(cuda.meshes[f])) << what << ", frame " << f;
  }
}

TEST(LowpolyCuda, MatchesCpuOnPhotos) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const std::vector<Values> settings = {
      {},
      {{"fill", std::string("centroid")}},
      {{"points", int64_t(3000)}, {"edge_weight", 30.0}, {"line_width", 1.5},
       {"line_color", std::vector<double>{250, 240, 10}}},
      {{"points_per_mp", 40000.0}, {"border_spacing", int64_t(7)}, {"seed", int64_t(rng() % 100000)}},
  };
  const std::pair<int, int> sizes[] = {{1920, 1080}, {641, 363}, {33, 17}, {1, 1}, {3, 200}};
  for (const auto& [w, h] : sizes)
    for (size_t s = 0; s < settings.size(); ++s) {
      const HostImage in = test::synthetic_photo(w, h, rng);
      auto a = make_stage(settings[s]);
      auto b = make_stage(settings[s]);
      expect_same(run_clip_cpu(*a, {in}), run_clip_cuda(*b, {in}),
                  std::to_string(w) + "x" + std::to_string(h) + " settings " + std::to_string(s));
      EXPECT_EQ(b->mesh_fallbacks(), 0) << "the device mesh was not certified";
    }
}

TEST(LowpolyCuda, MatchesCpuOnARealPhotograph) {
  SP_REQUIRE_CUDA();
  const HostImage photo = example_photo();
  for (const Values& v : {Values{}, Values{{"points_per_mp", 30000.0}, {"line_width", 1.0}},
                          Values{{"fill", std::string("centroid")}, {"edge_weight", 40.0}}}) {
    auto a = make_stage(v);
    auto b = make_stage(v);
    expect_same(run_clip_cpu(*a, {photo}), run_clip_cuda(*b, {photo}), "photo");
    EXPECT_EQ(b->mesh_fallbacks(), 0) << "the device mesh was not certified";
  }
}

// Long rings (a few interior vertices under a dense border: hundreds of
// neighbours, walked twice on the device) and very dense vertices.
TEST(LowpolyCuda, MatchesCpuOnExtremeDensities) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const HostImage in = test::synthetic_photo(400, 240, rng);
  for (const Values& v : {Values{{"points", int64_t(3)}, {"border_spacing", int64_t(2)}},
                          Values{{"points", int64_t(40)}, {"border_spacing", int64_t(1)}},
                          Values{{"points_per_mp", 200000.0}}}) {
    auto a = make_stage(v);
    auto b = make_stage(v);
    expect_same(run_clip_cpu(*a, {in}), run_clip_cuda(*b, {in}), "extreme density");
    EXPECT_EQ(b->mesh_fallbacks(), 0);
  }
}

// Every group size of the star kernel (one thread, 4 to 32 lanes per vertex) builds the same mesh.
TEST(LowpolyCuda, EveryLanesPerVertexMeshMatchesCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  for (const auto& [w, h] : {std::pair{1920, 1080}, std::pair{400, 240}}) {
    const HostImage in = test::synthetic_photo(w, h, rng);
    for (const Values& v : {Values{}, Values{{"points", int64_t(3)}, {"border_spacing", int64_t(2)}}}) {
      auto a = make_stage(v);
      const ClipResult cpu = run_clip_cpu(*a, {in});
      for (int lanes : {1, 4, 8, 16, 32}) {
        auto b = make_stage(v);
        b->set_mesh_lanes_for_testing(lanes);
        expect_same(cpu, run_clip_cuda(*b, {in}), std::to_string(lanes) + " lanes per vertex");
        EXPECT_EQ(b->mesh_fallbacks(), 0);
      }
    }
  }
}

// The safety net: a device mesh marked uncertified is replaced by the host's, same frame.
TEST(LowpolyCuda, UncertifiedDeviceMeshFallsBackToTheHost) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const auto clip = panning_clip(320, 200, 3, 4, rng);
  auto a = make_stage();
  auto b = make_stage();
  b->force_mesh_fallback_for_testing(true);
  expect_same(run_clip_cpu(*a, clip), run_clip_cuda(*b, clip), "forced fallback");
  EXPECT_EQ(b->mesh_fallbacks(), 3);
}

// The Voronoi diagnostic: identical JFA labels and square statistics on both backends.
TEST(LowpolyCuda, VoronoiCheckMatchesCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const std::vector<HostImage> inputs = {example_photo(), test::synthetic_photo(1920, 1080, rng),
                                         test::synthetic_photo(37, 21, rng)};
  for (const HostImage& in : inputs) {
    auto a = make_stage({{"voronoi_check", true}});
    auto b = make_stage({{"voronoi_check", true}});
    std::vector<int32_t> labels;
    SquareStats y;
    expect_same(run_clip_cpu(*a, {in}), run_clip_cuda(*b, {in}, [&](const LowpolyStage& s) {
      labels = s.voronoi_labels();
      y = s.square_stats();
    }), "voronoi_check");
    EXPECT_EQ(a->voronoi_labels(), labels);
    const SquareStats x = a->square_stats();
    EXPECT_EQ(x.triangles, y.triangles);
    EXPECT_EQ(x.not_ccw, y.not_ccw);
    EXPECT_EQ(x.delaunay, y.delaunay);
    EXPECT_EQ(x.distinct_delaunay, y.distinct_delaunay);
    EXPECT_EQ(x.missing, y.missing);
    EXPECT_EQ(y.overflow, 0);
    std::printf("%dx%d: %d square triangles, %d not counter-clockwise, %d Delaunay (%d distinct), %d of %zu exact "
                "triangles missing\n", in.width, in.height, y.triangles, y.not_ccw, y.delaunay, y.distinct_delaunay,
                y.missing, a->mesh().size());
  }
}

TEST(LowpolyCuda, MatchesCpuAt4K) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const HostImage in = test::synthetic_photo(3840, 2160, rng);
  auto a = make_stage();
  auto b = make_stage();
  expect_same(run_clip_cpu(*a, {in}), run_clip_cuda(*b, {in}), "3840x2160");
  EXPECT_EQ(b->mesh_fallbacks(), 0);
}

TEST(LowpolyCuda, MatchesCpuOnAPanningClipInTemporalMode) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const auto clip = panning_clip(480, 272, 10, 2, rng);
  for (const Values& v : {Values{{"temporal", true}, {"color_smoothing", 0.7}}, Values{{"temporal", true}},
                          Values{{"color_smoothing", 0.3}, {"line_width", 1.0}}}) {
    auto a = make_stage(v);
    auto b = make_stage(v);
    expect_same(run_clip_cpu(*a, clip), run_clip_cuda(*b, clip), "panning clip");
  }
}

// The refresh schedule (each tile once per refresh_seconds, at its own
// phase) is the same on both backends, frame for frame, over several periods.
TEST(LowpolyCuda, MatchesCpuWithTheTemporalRefresh) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const auto clip = panning_clip(480, 272, 24, 1, rng);
  const ClipClock clock{int64_t(rng() % 1000), 1.0 / 30};
  const Values v{{"temporal", true}, {"refresh_seconds", 0.2}};
  auto a = make_stage(v);
  auto b = make_stage(v);
  expect_same(run_clip_cpu(*a, clip, clock), run_clip_cuda(*b, clip, {}, clock), "panning clip, refresh 0.2 s");
}

TEST(LowpolyCuda, StaticClipGivesBitIdenticalFrames) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const HostImage in = test::synthetic_photo(640, 360, rng);
  auto stage = make_stage({{"temporal", true}, {"color_smoothing", 0.5}});
  const ClipResult r = run_clip_cuda(*stage, {in, in, in});
  for (size_t f = 1; f < r.frames.size(); ++f)
    EXPECT_EQ(test::compare(r.frames[f], r.frames[0]).differing_bytes, 0u) << "frame " << f;
}

}  // namespace
}  // namespace sp::lowpoly
