// The seed's lookup-map neighbour search (neighbours: lookup_map): every dot
// lands in the map exactly once, and the near field it gives equals the cell
// table's, also with crowded slots (long displacements) and coincident dots.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "pipeline/buffer_pool.h"
#include "pipeline/cuda_check.h"
#include "stages/halftone/fastsum_gpu.h"
#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_test_util.h"
#include "stages/halftone/lookup_map.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

using test::HostImage;

TEST(HalftoneLookupMapCuda, NearFieldMatchesCellTable) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed());
  const int w = 200, h = 150;
  auto pts = ink_points(test::synthetic_photo(w, h, rng), 12000, rng);
  // A crowd: 300 dots in a 1.5 x 1.5 px square (dozens per slot: long
  // displacement chains), and two coincident pairs.
  std::uniform_real_distribution<float> crowd(60.f, 61.5f);
  for (int i = 0; i < 300; ++i) pts.push_back({crowd(rng), crowd(rng)});
  pts.push_back(pts[10]);
  pts.push_back(pts[12005]);
  const int count = int(pts.size());
  const double density = double(count) / (w * h);
  FastsumSettings s;
  s.near_radius_px = std::sqrt(kDefaultNearNeighbours / (M_PI * density));
  const FastsumPlan plan = make_fastsum_plan(w, h, s);

  BufferPool pool;
  PooledScratch scratch(pool, MemoryKind::device);
  FastsumGpu fastsum;
  fastsum.configure(plan, count, scratch);
  LookupMapGpu map;
  map.configure(w, h, count + 100, float(1.0 / std::sqrt(2.0 * density)), scratch);
  float2* d_pos = to_device(pts);
  int* d_count = to_device(std::vector<int>{count});
  float2 *d_sorted = nullptr, *d_cells = nullptr, *d_map = nullptr;
  for (float2** p : {&d_sorted, &d_cells, &d_map}) SP_CUDA_CHECK(cudaMalloc(p, sizeof(float2) * count));
  SP_CUDA_CHECK(cudaMemset(d_cells, 0, sizeof(float2) * count));
  SP_CUDA_CHECK(cudaMemset(d_map, 0, sizeof(float2) * count));
  fastsum.sort(d_pos, d_sorted, d_count, nullptr);
  fastsum.add_near_field(d_sorted, d_count, d_cells, nullptr);
  map.add_near_field(d_sorted, d_count, plan.near, d_map, nullptr);
  const auto cells = to_host(d_cells, count), viamap = to_host(d_map, count);

  // The map holds every dot once.
  const auto slots = to_host(map.map(), size_t(map.dims().slots));
  const int displacement = to_host(map.max_displacement(), 1)[0];
  std::vector<std::pair<float, float>> stored, expected;
  for (unsigned long long v : slots) {
    if (v == ~0ull) continue;
    float2 q;
    std::memcpy(&q, &v, sizeof(q));
    stored.push_back({q.x, q.y});
  }
  for (const float2& p : pts) expected.push_back({p.x, p.y});
  std::sort(stored.begin(), stored.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(stored, expected);
  EXPECT_GT(displacement, 20);  // the crowd overflowed its slots

  double diff = 0, ref = 0;
  for (int i = 0; i < count; ++i) {
    diff += std::pow(viamap[i].x - cells[i].x, 2) + std::pow(viamap[i].y - cells[i].y, 2);
    ref += double(cells[i].x) * cells[i].x + double(cells[i].y) * cells[i].y;
  }
  std::printf("lookup map vs cell table near field, %d dots, max displacement %d slots: relative RMS %.3g\n", count,
              displacement, std::sqrt(diff / ref));
  EXPECT_GT(ref, 0.0);
  EXPECT_LT(std::sqrt(diff / ref), 1e-5);
  for (void* p : {static_cast<void*>(d_pos), static_cast<void*>(d_count), static_cast<void*>(d_sorted),
                  static_cast<void*>(d_cells), static_cast<void*>(d_map)})
    SP_CUDA_CHECK(cudaFree(p));
}

TEST(HalftoneLookupMapCuda, StageWithLookupMapTracksCpu) {
  SP_REQUIRE_CUDA();
  Params p = halftone_default_params();
  p.set("iterations", int64_t(4));
  p.set("shake", 0.0);
  p.set("neighbours", std::string("lookup_map"));
  expect_cuda_dots_track_cpu(p, test::fresh_seed() + 1);
}

}  // namespace
}  // namespace sp::halftone
