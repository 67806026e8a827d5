// CUDA against the CPU: fast-summation forces, the attraction field, and the
// stage (initial placement, a few iterations, warm start, points_out); and
// two GPU runs against each other (deterministic: true repeats to the bit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "pipeline/buffer_pool.h"
#include "pipeline/cuda_check.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/fastsum_gpu.h"
#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_colour.h"
#include "stages/halftone/halftone_test_util.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

using test::HostImage;

TEST(HalftoneCuda, FastsumForcesMatchCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed());
  const int w = 220, h = 160, count = 20000;
  auto pts = ink_points(test::synthetic_photo(w, h, rng), count, rng);
  const FastsumPlan plan = test_fastsum_plan(w, h, count);
  const GpuFastsumResult gpu = gpu_fastsum(plan, pts);
  const auto& g_sorted = gpu.sorted;
  const auto& g_force = gpu.force;

  FastsumCpu cpu(plan, count);
  cpu.sort(pts.data(), count);
  std::vector<float2> c_force(count);
  cpu.forces(pts.data(), count, c_force.data());
  std::vector<double> dx(count), dy(count);
  direct_forces(pts.data(), count, dx.data(), dy.data());

  double diff = 0, ref = 0, err = 0;
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(g_sorted[i].x, pts[i].x) << i;  // same stable order by cell
    ASSERT_EQ(g_sorted[i].y, pts[i].y) << i;
    diff += std::pow(g_force[i].x - c_force[i].x, 2) + std::pow(g_force[i].y - c_force[i].y, 2);
    err += std::pow(g_force[i].x - dx[i], 2) + std::pow(g_force[i].y - dy[i], 2);
    ref += dx[i] * dx[i] + dy[i] * dy[i];
  }
  std::printf("GPU vs CPU forces: relative RMS %.3g; GPU vs direct: %.3g\n", std::sqrt(diff / ref),
              std::sqrt(err / ref));
  EXPECT_LT(std::sqrt(diff / ref), 1e-5);
  EXPECT_LT(std::sqrt(err / ref), 1e-3);
}

// The device sort restores index order within each cell by a warp's ranks,
// or, in cells of more than 32 dots, by an insertion sort: both must give
// the CPU's stable order. Clusters crowd some cells past 32.
TEST(HalftoneCuda, SortKeepsIndexOrderInCrowdedCells) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 9);
  const int w = 160, h = 120, count = 6000;
  const FastsumPlan plan = test_fastsum_plan(w, h, count);
  std::uniform_real_distribution<float> ux(0.f, float(w)), uy(0.f, float(h)), jitter(0.f, 1.f);
  std::vector<float2> pts;
  while (int(pts.size()) < count) {
    if (rng() % 50 == 0) {
      // A cluster inside one cell: 33 to 90 dots.
      const float x0 = plan.cell_w * float(rng() % plan.cells_x), y0 = plan.cell_h * float(rng() % plan.cells_y);
      for (int k = 33 + int(rng() % 58); k > 0 && int(pts.size()) < count; --k)
        pts.push_back(make_float2(x0 + 0.99f * plan.cell_w * jitter(rng), y0 + 0.99f * plan.cell_h * jitter(rng)));
    } else {
      pts.push_back(make_float2(ux(rng), uy(rng)));
    }
  }
  const GpuFastsumResult gpu = gpu_fastsum(plan, pts);
  FastsumCpu cpu(plan, count);
  cpu.sort(pts.data(), count);
  const std::vector<int>& start = cpu.cell_start();
  int crowded = 0;
  for (size_t c = 0; c + 1 < start.size(); ++c) crowded += start[c + 1] - start[c] > 32;
  EXPECT_GT(crowded, 5);
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(gpu.sorted[i].x, pts[i].x) << i;
    ASSERT_EQ(gpu.sorted[i].y, pts[i].y) << i;
  }
}

// The exact spread (fixed-point sums, for the seams' handover) repeats to the
// bit, where the float atomics' order varies, and gives the same forces.
TEST(HalftoneCuda, ExactSumsRepeatToTheBitAndMatchTheFloatSpread) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 6);
  const int w = 200 + int(rng() % 60), h = 150 + int(rng() % 40), count = 30000;
  const auto pts = ink_points(test::synthetic_photo(w, h, rng), count, rng);
  const FastsumPlan plan = test_fastsum_plan(w, h, count);
  const GpuFastsumResult exact = gpu_fastsum(plan, pts, true), again = gpu_fastsum(plan, pts, true),
                         fast = gpu_fastsum(plan, pts);
  double diff = 0, ref = 0;
  int repeated = 0;
  for (int i = 0; i < count; ++i) {
    repeated += exact.force[i].x == again.force[i].x && exact.force[i].y == again.force[i].y;
    diff += std::pow(exact.force[i].x - fast.force[i].x, 2) + std::pow(exact.force[i].y - fast.force[i].y, 2);
    ref += std::pow(fast.force[i].x, 2) + std::pow(fast.force[i].y, 2);
  }
  std::printf("exact vs float spread: relative RMS %.3g\n", std::sqrt(diff / ref));
  EXPECT_EQ(repeated, count);
  EXPECT_LT(std::sqrt(diff / ref), 1e-6);
}

// The pruned transforms (row R2C over h rows, column C2C, row C2R into h rows)
// at odd, non-square sizes, wide and tall; two frames each, so a second frame
// would see padding that the first left non-zero. Against the CPU (the same
// pruning with FFTW) and, at a subset of pixels, the float64 direct sum.
TEST(HalftoneCuda, AttractionMatchesCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 1);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (auto [w, h] : {std::pair{131, 77}, std::pair{61, 103}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    const AttractionPlan plan = make_attraction_plan(w, h);
    AttractionCpu cpu(plan);
    BufferPool pool;
    PooledScratch scratch(pool, MemoryKind::device);
    AttractionGpu gpu;
    gpu.configure(plan, scratch);
    const size_t pixels = size_t(w) * h;
    float *d_ink = nullptr, *d_fx = nullptr, *d_fy = nullptr;
    FrameNumbers* d_numbers = nullptr;
    SP_CUDA_CHECK(cudaMalloc(&d_ink, sizeof(float) * pixels));
    SP_CUDA_CHECK(cudaMalloc(&d_fx, sizeof(float) * pixels));
    SP_CUDA_CHECK(cudaMalloc(&d_fy, sizeof(float) * pixels));
    SP_CUDA_CHECK(cudaMalloc(&d_numbers, sizeof(FrameNumbers)));
    for (int frame = 0; frame < 2; ++frame) {
      SCOPED_TRACE("frame " + std::to_string(frame));
      std::vector<float> ink(pixels);
      for (auto& v : ink) v = u(rng);
      FrameNumbers numbers;
      numbers.lambda = frame == 0 ? 0.75f : 1.3f;
      std::vector<float> fx(pixels), fy(pixels);
      cpu.compute(ink.data(), numbers.lambda, fx.data(), fy.data());
      SP_CUDA_CHECK(cudaMemcpy(d_ink, ink.data(), sizeof(float) * pixels, cudaMemcpyHostToDevice));
      SP_CUDA_CHECK(cudaMemcpy(d_numbers, &numbers, sizeof(FrameNumbers), cudaMemcpyHostToDevice));
      gpu.compute(d_ink, d_numbers, d_fx, d_fy, nullptr);
      const auto gx = to_host(d_fx, pixels), gy = to_host(d_fy, pixels);
      double diff = 0, ref = 0;
      for (size_t i = 0; i < pixels; ++i) {
        diff += std::pow(gx[i] - fx[i], 2) + std::pow(gy[i] - fy[i], 2);
        ref += double(fx[i]) * fx[i] + double(fy[i]) * fy[i];
      }
      EXPECT_LT(std::sqrt(diff / ref), 1e-5);
      const double vs_direct = attraction_error_vs_direct(ink, w, h, numbers.lambda, gx, gy, 3, 5, 1);
      std::printf("attraction %dx%d, GPU vs CPU: relative RMS %.3g; vs direct: %.3g\n", w, h, std::sqrt(diff / ref),
                  vs_direct);
      EXPECT_LT(vs_direct, 1e-4);
    }
    for (void* p : {static_cast<void*>(d_ink), static_cast<void*>(d_numbers), static_cast<void*>(d_fx),
                    static_cast<void*>(d_fy)})
      SP_CUDA_CHECK(cudaFree(p));
  }
}

TEST(HalftoneCuda, InitialPlacementAndRenderingMatchCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 2);
  const HostImage img = test::synthetic_photo(150, 110, rng);
  Params p = halftone_default_params();
  p.set("iterations", int64_t(0));
  p.set("dots_per_pixel", 0.6);
  HalftoneStage cpu(parse_halftone_params(p)), gpu(parse_halftone_params(p));
  const HostImage a = test::run_stage_cpu(cpu, img);
  StageRunner runner(gpu, img.width, img.height, Backend::cuda);
  const HostImage b = runner.process(img, 0);
  EXPECT_EQ(gpu.numbers().count, cpu.numbers().count);
  const auto pc = cpu.particles(), pg = gpu.particles();
  ASSERT_EQ(pc.size(), pg.size());
  size_t same = 0;
  for (size_t i = 0; i < pc.size(); ++i) same += pc[i].x == pg[i].x && pc[i].y == pg[i].y;
  EXPECT_GE(same, pc.size() - pc.size() / 1000);  // float ink may flip a rare acceptance
  const test::ImageDiff d = test::compare(a, b);
  EXPECT_LE(d.mean_abs, 0.05);
}

// Iterations amplify float differences slowly: after a few the dot sets agree closely.
TEST(HalftoneCuda, IterationsTrackCpu) {
  SP_REQUIRE_CUDA();
  Params p = halftone_default_params();
  p.set("iterations", int64_t(4));
  p.set("shake", 0.0);
  expect_cuda_dots_track_cpu(p, test::fresh_seed() + 3);
}

// Warm frames run their iterations as one CUDA graph, captured at the first
// warm frame and launched again for the next: both track the CPU.
TEST(HalftoneCuda, WarmFramesAsAGraphTrackCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 5);
  const HostImage a = test::synthetic_photo(120, 90, rng), b = test::synthetic_photo(120, 90, rng);
  Params p = halftone_default_params();
  p.set("iterations", int64_t(2));  // 4 iterations in all, as IterationsTrackCpu
  p.set("video_iterations", int64_t(1));
  p.set("shake", 0.0);
  HalftoneStage cpu(parse_halftone_params(p)), gpu(parse_halftone_params(p));
  StageRunner rc(cpu, a.width, a.height, Backend::cpu), rg(gpu, a.width, a.height, Backend::cuda);
  int frame = 0;
  for (const HostImage* img : {&a, &b, &a}) {
    rc.process(*img, frame);
    rg.process(*img, frame);
    const auto pc = cpu.particles(), pg = gpu.particles();
    ASSERT_EQ(pc.size(), pg.size()) << "frame " << frame;
    if (frame > 0) {
      EXPECT_GT(gpu.numbers().kept, 0) << "frame " << frame;
    }
    // A warm frame keeps a dot where a random threshold says so. A dot on its
    // threshold goes either way with the last bits of its place, which the
    // far field's float atomics leave different from run to run (2e-5 px
    // after frame 0): SP_TEST_SEED=898048188 kept 1,344 or 1,343 dots, by
    // turns on one H200, and one dot more or less moves its neighbours (352 of
    // 1,432 apart, up to 13 px). Dots are compared while the decisions agree.
    const int kept_apart = std::abs(gpu.numbers().kept - cpu.numbers().kept);
    EXPECT_LE(kept_apart, 2) << "kept " << gpu.numbers().kept << " on CUDA, " << cpu.numbers().kept << " on the CPU";
    if (kept_apart > 0) break;
    // Where they agree, a float difference near a threshold still moves a few
    // dots: SP_TEST_SEED=492959909 left 16 of 1463 and 35 of 1403 apart (1.1%,
    // 2.5%), with the graph and launch by launch alike (H200, session 33).
    const int far = unmatched_dots(pc, pg);
    EXPECT_LE(far, int(pc.size() / (frame == 0 ? 200 : 20))) << far << " of " << pc.size() << ", frame " << frame;
    ++frame;
  }
}

// The dot sets of a halftone stage, mono or colour.
std::vector<std::vector<float2>> dot_sets(const Stage& stage) {
  if (const auto* mono = dynamic_cast<const HalftoneStage*>(&stage)) return {mono->particles()};
  const auto& colour = dynamic_cast<const ColourHalftoneStage&>(stage);
  return {colour.channel(0).particles(), colour.channel(1).particles(), colour.channel(2).particles()};
}

// deterministic: two runs of the same frames on the GPU give the same dots
// and pictures to the bit, warm frames (replayed as a graph) included.
// Without it the far field's float atomics leave ~2e-5 px between runs.
TEST(HalftoneCuda, DeterministicRunsRepeatToTheBit) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 7);
  const HostImage a = test::synthetic_photo(160, 120, rng), b = test::synthetic_photo(160, 120, rng);
  const StageDescriptor d = make_halftone_descriptor();
  for (const char* channels : {"mono", "cmy"}) {
    SCOPED_TRACE(channels);
    Params p = halftone_default_params();
    p.set("channels", std::string(channels));
    p.set("iterations", int64_t(8));
    p.set("video_iterations", int64_t(4));
    p.set("far_field_every", int64_t(2));
    p.set("deterministic", true);
    const std::unique_ptr<Stage> first = d.create(p), second = d.create(p);
    StageRunner r1(*first, a.width, a.height, Backend::cuda), r2(*second, a.width, a.height, Backend::cuda);
    int frame = 0;
    for (const HostImage* img : {&a, &b, &a, &b}) {
      const HostImage o1 = r1.process(*img, frame, frame / 25.0), o2 = r2.process(*img, frame, frame / 25.0);
      EXPECT_TRUE(o1.pixels == o2.pixels) << "frame " << frame << ": the pictures differ";
      const auto s1 = dot_sets(*first), s2 = dot_sets(*second);
      for (size_t c = 0; c < s1.size(); ++c) {
        EXPECT_GT(s1[c].size(), 100u);
        ASSERT_EQ(s1[c].size(), s2[c].size()) << "frame " << frame << ", set " << c;
        EXPECT_EQ(same_dots(s1[c], s2[c]), s1[c].size()) << "frame " << frame << ", set " << c;
      }
      ++frame;
    }
  }
}

TEST(HalftoneCuda, WarmStartAndPointsOut) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 4);
  const HostImage a = test::synthetic_photo(100, 80, rng), b = test::synthetic_photo(100, 80, rng);
  const std::string path = "/tmp/halftone_gpu_points_" + std::to_string(test::fresh_seed()) + ".csv";
  Params p = halftone_default_params();
  p.set("iterations", int64_t(10));
  p.set("video_iterations", int64_t(5));
  p.set("points_out", path);
  HalftoneStage cpu(parse_halftone_params(p)), gpu(parse_halftone_params(p));
  StageRunner rc(cpu, 100, 80, Backend::cpu), rg(gpu, 100, 80, Backend::cuda);
  rc.process(a, 0);
  rg.process(a, 0);
  rc.process(b, 1);
  const HostImage out = rg.process(b, 1);
  EXPECT_EQ(gpu.numbers().count, cpu.numbers().count);
  EXPECT_NEAR(gpu.numbers().kept, cpu.numbers().kept, 0.02 * cpu.numbers().count + 2);
  EXPECT_LT(blurred_error(b, out, 2.0), 0.1);
  std::ifstream file(path);
  int lines = 0;
  for (std::string line; std::getline(file, line);) ++lines;
  EXPECT_EQ(lines - 1, gpu.numbers().count);
  std::remove(path.c_str());
}

// Warm births by the ink's growth (a CUB scan and a binary search on the
// device) and held dots (carried through every sort by its permutation):
// the same counts, stillness and tone as the CPU, frame after frame.
TEST(HalftoneCuda, GrowthBirthsAndHeldDotsTrackCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 6);
  const PatchClip clip = patch_clip(160, 120, 12, rng);
  const Params p = held_video_params(0.3);
  HalftoneStage cpu(parse_halftone_params(p)), gpu(parse_halftone_params(p));
  StageRunner rc(cpu, 160, 120, Backend::cpu), rg(gpu, 160, 120, Backend::cuda);
  std::vector<HostImage> out_cpu, out_gpu;
  for (size_t f = 0; f < clip.frames.size(); ++f) {
    out_cpu.push_back(rc.process(clip.frames[f], int64_t(f)));
    out_gpu.push_back(rg.process(clip.frames[f], int64_t(f)));
    EXPECT_EQ(gpu.numbers().count, cpu.numbers().count) << "frame " << f;
    EXPECT_NEAR(gpu.numbers().kept, cpu.numbers().kept, 0.02 * cpu.numbers().count + 2) << "frame " << f;
  }
  const double still_cpu = still_share(clip, out_cpu, 12.f), still_gpu = still_share(clip, out_gpu, 12.f);
  const double error_cpu = mean_blurred_error(clip.frames, out_cpu), error_gpu = mean_blurred_error(clip.frames, out_gpu);
  std::printf("still share cpu %.3f, cuda %.3f; blurred error %.4f / %.4f\n", still_cpu, still_gpu, error_cpu,
              error_gpu);
  EXPECT_NEAR(still_gpu, still_cpu, 0.03);
  EXPECT_GT(still_gpu, 0.8);
  EXPECT_LT(error_gpu, 1.2 * error_cpu + 0.002);
}

// A fade to white: surplus survivors dropped evenly on the device as on the
// CPU (the same counts each frame, the same tone).
TEST(HalftoneCuda, FadeDropsTheSurplusAsTheCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 7);
  const HostImage photo = test::synthetic_photo(160, 120, rng);
  const Params p = held_video_params(0.2);
  HalftoneStage cpu(parse_halftone_params(p)), gpu(parse_halftone_params(p));
  StageRunner rc(cpu, 160, 120, Backend::cpu), rg(gpu, 160, 120, Backend::cuda);
  int surplus_frames = 0;
  for (int f = 0; f < 16; ++f) {
    const HostImage frame = faded(photo, 1.0 - 0.03 * f);
    const HostImage out_cpu = rc.process(frame, f), out_gpu = rg.process(frame, f);
    EXPECT_EQ(gpu.numbers().count, cpu.numbers().count) << "frame " << f;
    EXPECT_NEAR(gpu.numbers().kept, cpu.numbers().kept, 0.02 * cpu.numbers().count + 2) << "frame " << f;
    surplus_frames += f > 0 && gpu.numbers().kept == gpu.numbers().count;
    EXPECT_LT(blurred_error(frame, out_gpu, 2.0), 1.2 * blurred_error(frame, out_cpu, 2.0) + 0.005) << "frame " << f;
  }
  EXPECT_GE(surplus_frames, 3);
}

}  // namespace
}  // namespace sp::halftone
