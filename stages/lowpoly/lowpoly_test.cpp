// The lowpoly stage on the CPU: vertices, mesh validity on real frames, the
// mean and centroid fills against brute force, lines, parameters, video.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "stages/lowpoly/lowpoly_mesh_oracle.h"
#include "stages/lowpoly/lowpoly_test_util.h"

namespace sp::lowpoly {
namespace {

using test::fresh_seed;
using test::HostImage;
using namespace testing;

std::vector<uint32_t> vertices_of(const std::vector<Triangle>& tris) {
  std::set<uint32_t> s;
  for (const Triangle& t : tris) s.insert(t.a), s.insert(t.b), s.insert(t.c);
  return {s.begin(), s.end()};
}

// The triangle owning each pixel, found by brute force with the oracle's own rule; -1 if none or several.
std::vector<int> owners(const std::vector<Triangle>& tris, int w, int h) {
  std::vector<int> owner(size_t(w) * h, -1), hits(size_t(w) * h, 0);
  for (size_t t = 0; t < tris.size(); ++t)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        if (oracle::nudged_inside(tris[t], x, y)) owner[size_t(y) * w + x] = int(t), ++hits[size_t(y) * w + x];
  for (size_t i = 0; i < owner.size(); ++i)
    if (hits[i] != 1) owner[i] = -1;
  return owner;
}

TEST(LowpolyStage, MeshOnAPhotoIsAValidDelaunayTriangulation) {
  std::mt19937_64 rng(fresh_seed());
  for (auto [w, h] : {std::pair{160, 120}, std::pair{97, 61}, std::pair{1, 1}, std::pair{2, 3}, std::pair{200, 7}}) {
    const HostImage in = test::synthetic_photo(w, h, rng);
    auto stage = make_stage({{"points_per_mp", 20000.0}, {"seed", int64_t(rng() % 1000)}});
    const ClipResult r = run_clip_cpu(*stage, {in});
    const auto pts = vertices_of(r.meshes[0]);
    oracle::expect_valid_delaunay(pts, r.meshes[0], w, h);
  }
}

void expect_exact_mean_fill(const HostImage& in, std::mt19937_64& rng) {
  const int w = in.width, h = in.height;
  auto stage = make_stage({{"points", int64_t(150)}, {"seed", int64_t(rng() % 1000)}});
  const ClipResult r = run_clip_cpu(*stage, {in});
  const auto& tris = r.meshes[0];
  const std::vector<int> owner = owners(tris, w, h);
  std::vector<std::array<double, 5>> sums(tris.size(), {0, 0, 0, 0, 0});
  for (size_t i = 0; i < owner.size(); ++i) {
    ASSERT_GE(owner[i], 0) << "pixel " << i << " not in exactly one triangle";
    for (int c = 0; c < 4; ++c) sums[owner[i]][c] += in.pixels[4 * i + c];
    sums[owner[i]][4] += 1;
  }
  int wrong = 0;
  for (size_t i = 0; i < owner.size(); ++i)
    for (int c = 0; c < 4; ++c) {
      const auto& s = sums[owner[i]];
      wrong += r.frames[0].pixels[4 * i + c] != uint8_t(std::floor(s[c] / s[4] + 0.5));
    }
  EXPECT_EQ(wrong, 0);
}

TEST(LowpolyStage, MeanFillIsTheExactMeanOfEachTrianglesPixels) {
  std::mt19937_64 rng(fresh_seed());
  // A real photograph, cropped at a random place, and a synthetic one.
  const HostImage photo = example_photo();
  const int w = 120, h = 90, ox = int(rng() % uint64_t(photo.width - w)), oy = int(rng() % uint64_t(photo.height - h));
  HostImage crop(w, h);
  for (int y = 0; y < h; ++y)
    std::memcpy(&crop.pixels[size_t(y) * w * 4], &photo.pixels[(size_t(y + oy) * photo.width + ox) * 4], size_t(w) * 4);
  ASSERT_GT(test::compare(crop, HostImage(w, h)).mean_abs, 20.0) << "the photo did not decode";
  expect_exact_mean_fill(crop, rng);
  expect_exact_mean_fill(test::synthetic_photo(w, h, rng), rng);
}

TEST(LowpolyStage, CentroidFillSamplesTheCentroidPixel) {
  std::mt19937_64 rng(fresh_seed());
  const int w = 100, h = 80;
  const HostImage in = test::synthetic_photo(w, h, rng);
  auto stage = make_stage({{"points", int64_t(100)}, {"fill", std::string("centroid")}});
  const ClipResult r = run_clip_cpu(*stage, {in});
  const auto& tris = r.meshes[0];
  const std::vector<int> owner = owners(tris, w, h);
  int wrong = 0;
  for (size_t i = 0; i < owner.size(); ++i) {
    ASSERT_GE(owner[i], 0);
    const Triangle& t = tris[owner[i]];
    const int cx = std::min(w - 1, (oracle::px(t.a) + oracle::px(t.b) + oracle::px(t.c)) / 3);
    const int cy = std::min(h - 1, (oracle::py(t.a) + oracle::py(t.b) + oracle::py(t.c)) / 3);
    wrong += std::memcmp(&r.frames[0].pixels[4 * i], &in.pixels[(size_t(cy) * w + cx) * 4], 4) != 0;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(LowpolyStage, VertexCountAndDensityFollowTheParameters) {
  std::mt19937_64 rng(fresh_seed());
  const int w = 400, h = 300;
  // Left half flat grey, right half a fine checkerboard (edges everywhere).
  HostImage in(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t v = x < w / 2 ? 128 : (((x / 3) + (y / 3)) % 2 ? 230 : 20);
      uint8_t* p = &in.pixels[(size_t(y) * w + x) * 4];
      p[0] = p[1] = p[2] = v, p[3] = 255;
    }
  const int64_t n = 3000;
  auto stage = make_stage({{"points", n}, {"edge_weight", 10.0}, {"seed", int64_t(rng() % 1000)}});
  const ClipResult r = run_clip_cpu(*stage, {in});
  const auto pts = vertices_of(r.meshes[0]);
  int left = 0, right = 0;
  for (uint32_t p : pts)
    if (!oracle::on_rectangle(p, w, h)) (oracle::px(p) < w / 2 - 2 ? left : oracle::px(p) > w / 2 + 2 ? right : left) += 1;
  const int interior = left + right;
  EXPECT_NEAR(interior, double(n), 6 * std::sqrt(double(n)));
  // Weight 1 against 1 + 10: about 11 times denser on the edges.
  EXPECT_GT(right, 6 * left);
  // Same seed, same vertices; another seed, other vertices.
  auto again = make_stage({{"points", n}, {"edge_weight", 10.0}, {"seed", int64_t(stage->plan().seed)}});
  EXPECT_EQ(vertices_of(run_clip_cpu(*again, {in}).meshes[0]), pts);
  auto other = make_stage({{"points", n}, {"edge_weight", 10.0}, {"seed", int64_t(stage->plan().seed + 1)}});
  EXPECT_NE(vertices_of(run_clip_cpu(*other, {in}).meshes[0]), pts);
}

TEST(LowpolyStage, BorderVerticesFollowTheSpacing) {
  std::mt19937_64 rng(fresh_seed());
  const HostImage in = test::synthetic_photo(300, 200, rng);
  auto stage = make_stage({{"points", int64_t(50)}, {"border_spacing", int64_t(25)}});
  const ClipResult r = run_clip_cpu(*stage, {in});
  std::set<int> top;
  for (uint32_t p : vertices_of(r.meshes[0]))
    if (oracle::py(p) == 0) top.insert(oracle::px(p));
  EXPECT_EQ(top, (std::set<int>{0, 25, 50, 75, 100, 125, 150, 175, 200, 225, 250, 275, 300}));
}

TEST(LowpolyStage, LinesFollowTheMeshEdges) {
  std::mt19937_64 rng(fresh_seed());
  const int w = 160, h = 120;
  const HostImage in = test::synthetic_photo(w, h, rng);
  const std::vector<double> magenta = {255, 0, 255, 77};  // alpha 77: a colour the input never has
  auto stage = make_stage({{"points", int64_t(80)}, {"line_width", 2.0}, {"line_color", magenta}});
  const ClipResult r = run_clip_cpu(*stage, {in});
  const auto& tris = r.meshes[0];
  const std::vector<int> owner = owners(tris, w, h);
  // A pixel is drawn when it lies within half the width of the line through
  // one of its own triangle's edges (frame-border edges excepted).
  int lines = 0, misplaced = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      ASSERT_GE(owner[size_t(y) * w + x], 0);
      const Triangle& t = tris[owner[size_t(y) * w + x]];
      const uint32_t v[3] = {t.a, t.b, t.c};
      double best = 1e9;
      for (int i = 0; i < 3; ++i) {
        const double ax = oracle::px(v[i]), ay = oracle::py(v[i]), bx = oracle::px(v[(i + 1) % 3]),
                     by = oracle::py(v[(i + 1) % 3]);
        if ((ax == bx && (ax == 0 || ax == w)) || (ay == by && (ay == 0 || ay == h))) continue;
        best = std::min(best, std::abs((bx - ax) * (y - ay) - (by - ay) * (x - ax)) / std::hypot(bx - ax, by - ay));
      }
      const uint8_t* p = &r.frames[0].pixels[(size_t(y) * w + x) * 4];
      const bool line = p[0] == 255 && p[1] == 0 && p[2] == 255 && p[3] == 77;
      lines += line;
      if (std::abs(best - 1.0) > 1e-9 && line != (best < 1.0)) ++misplaced;  // half width: 1 px
    }
  EXPECT_GT(lines, w * h / 20);
  EXPECT_EQ(misplaced, 0);
}

TEST(LowpolyStage, TableRejectsConflictingParameters) {
  EXPECT_THROW(make_stage({{"points", int64_t(10)}, {"points_per_mp", 100.0}}), std::runtime_error);
  EXPECT_THROW(make_stage({{"line_color", std::vector<double>{1, 2}}}), std::runtime_error);
  EXPECT_NO_THROW(make_stage({{"line_color", std::vector<double>{1, 2, 3, 4}}}));
}

TEST(LowpolyVideo, StaticClipGivesBitIdenticalFrames) {
  std::mt19937_64 rng(fresh_seed());
  const HostImage in = test::synthetic_photo(160, 120, rng);
  for (bool temporal : {false, true}) {
    auto stage = make_stage({{"temporal", temporal}, {"color_smoothing", temporal ? 0.6 : 0.0}});
    const ClipResult r = run_clip_cpu(*stage, {in, in, in, in});
    for (size_t f = 1; f < r.frames.size(); ++f) {
      EXPECT_EQ(test::compare(r.frames[f], r.frames[0]).differing_bytes, 0u) << "frame " << f << " temporal " << temporal;
      EXPECT_EQ(oracle::canonical(r.meshes[f]), oracle::canonical(r.meshes[0]));
    }
  }
}

TEST(LowpolyVideo, TemporalModeFlickersLessOnASlowPan) {
  std::mt19937_64 rng(fresh_seed());
  const auto clip = panning_clip(192, 128, 12, 1, rng);
  auto plain = make_stage();
  auto temporal = make_stage({{"temporal", true}, {"color_smoothing", 0.5}});
  const double f_plain = flicker(run_clip_cpu(*plain, clip).frames);
  const double f_temporal = flicker(run_clip_cpu(*temporal, clip).frames);
  EXPECT_LT(f_temporal, 0.7 * f_plain) << "plain " << f_plain << ", temporal " << f_temporal;
}

// With refresh_seconds a tile's vertices depend only on the last period's
// frames: a run that starts later (a segment after its warm-up) gives the
// single run's frames exactly once a period has passed. With refresh 0 the
// late run keeps the vertices of its own first frame where the single run
// keeps older ones (a pan moves the edges, not their amount).
TEST(LowpolyVideo, RunStartedLaterMatchesTheSingleRunAfterOneRefreshPeriod) {
  std::mt19937_64 rng(fresh_seed());
  const auto clip = panning_clip(192, 128, 40, 1, rng);
  const double frame_seconds = 1.0 / 25, period = 0.4;
  const int late_start = 12 + int(rng() % 5), caught_up = late_start + int(std::ceil(period / frame_seconds)) + 1;
  for (const double refresh : {period, 0.0}) {
    auto single_stage = make_stage({{"temporal", true}, {"refresh_seconds", refresh}});
    auto late_stage = make_stage({{"temporal", true}, {"refresh_seconds", refresh}});
    const ClipResult single = run_clip_cpu(*single_stage, clip, {0, frame_seconds});
    const ClipResult late =
        run_clip_cpu(*late_stage, std::vector<HostImage>(clip.begin() + late_start, clip.end()), {late_start, frame_seconds});
    int differing_frames = 0;
    for (size_t f = size_t(caught_up); f < clip.size(); ++f)
      differing_frames += test::compare(single.frames[f], late.frames[f - size_t(late_start)]).differing_bytes > 0;
    if (refresh > 0)
      EXPECT_EQ(differing_frames, 0) << "frames from " << caught_up << " on, started at " << late_start;
    else
      EXPECT_GT(differing_frames, 0) << "without a refresh the late run should keep vertices of its own";
  }
}

TEST(LowpolyVideo, TemporalModeResamplesOnlyChangedTiles) {
  std::mt19937_64 rng(fresh_seed());
  const int w = 256, h = 128;
  HostImage a = test::synthetic_photo(w, h, rng), b = a;
  // Paint the right half of the second frame flat: its edge map changes, the
  // left half's does not (but for the column next to the seam, whose Sobel
  // sees the new half: the tile holding it may re-sample too).
  for (int y = 0; y < h; ++y)
    for (int x = w / 2; x < w; ++x) std::memcpy(&b.pixels[(size_t(y) * w + x) * 4], "\x50\x60\x70\xff", 4);
  auto stage = make_stage({{"temporal", true}, {"points_per_mp", 20000.0}});
  const ClipResult r = run_clip_cpu(*stage, {a, b});
  auto side = [&](const std::vector<Triangle>& m, bool left) {
    std::vector<uint32_t> out;
    for (uint32_t p : vertices_of(m))
      if ((left ? oracle::px(p) < w / 2 - kTile : oracle::px(p) >= w / 2) && !oracle::on_rectangle(p, w, h))
        out.push_back(p);
    return out;
  };
  EXPECT_EQ(side(r.meshes[1], true), side(r.meshes[0], true));
  EXPECT_NE(side(r.meshes[1], false), side(r.meshes[0], false));
}

}  // namespace
}  // namespace sp::lowpoly
