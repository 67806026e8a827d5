// CUDA against the CPU implementation (skipped without a GPU). The stroke
// branch, the tone levels and the final combination are integer, fixed-order
// or rounded step by step, and must match exactly; lu2012 differs by the CG's
// reduction order, within PSNR 50 dB / 3 LSB.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pipeline/buffer_pool.h"
#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_cpu.h"
#include "stages/pencil/pencil_cuda.h"
#include "stages/pencil/pencil_solve.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using sp::test::fresh_seed;
using sp::test::HostImage;

template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  size_t n = 0;
  explicit DeviceArray(size_t count) : n(count) { SP_CUDA_CHECK(cudaMalloc(&ptr, count * sizeof(T) + 16)); }
  DeviceArray(const T* host, size_t count) : DeviceArray(count) {
    SP_CUDA_CHECK(cudaMemcpy(ptr, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { cudaFree(ptr); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    SP_CUDA_CHECK(cudaMemcpy(h.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

double psnr(const HostImage& a, const HostImage& b) {
  double se = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) se += double(a.pixels[i] - b.pixels[i]) * (a.pixels[i] - b.pixels[i]);
  return se == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 / (se / a.pixels.size()));
}

// Frames [from, end) through a configured CUDA stage, one after another.
std::vector<HostImage> run_cuda(PencilStage& stage, const std::vector<HostImage>& inputs, size_t from = 0,
                                std::vector<SolveStats>* stats = nullptr) {
  const Size size{inputs[0].width, inputs[0].height};
  cudaStream_t stream;
  SP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t bytes = inputs[0].pixels.size();
  DeviceArray<uint8_t> din(bytes), dout(bytes);
  std::vector<HostImage> outputs;
  for (size_t i = from; i < inputs.size(); ++i) {
    SP_CUDA_CHECK(cudaMemcpyAsync(din.ptr, inputs[i].pixels.data(), bytes, cudaMemcpyHostToDevice, stream));
    SP_CUDA_CHECK(cudaMemsetAsync(dout.ptr, 0xA5, bytes, stream));
    stage.process_cuda({din.ptr, size.width, size.height, size_t(size.width) * 4},
                       {dout.ptr, size.width, size.height, size_t(size.width) * 4}, {int64_t(i), 0}, stream);
    HostImage out(size.width, size.height);
    SP_CUDA_CHECK(cudaMemcpyAsync(out.pixels.data(), dout.ptr, bytes, cudaMemcpyDeviceToHost, stream));
    SP_CUDA_CHECK(cudaStreamSynchronize(stream));
    outputs.push_back(out);
    if (stats) stats->push_back(stage.last_solve());
  }
  SP_CUDA_CHECK(cudaStreamDestroy(stream));
  return outputs;
}

// Frames [0, count) through a configured CPU stage.
std::vector<HostImage> run_cpu(PencilStage& stage, const std::vector<HostImage>& inputs, size_t count,
                               std::vector<SolveStats>* stats = nullptr) {
  std::vector<HostImage> outputs;
  for (size_t i = 0; i < count; ++i) {
    HostImage out(inputs[i].width, inputs[i].height);
    stage.process_cpu(inputs[i].view(), out.view(), {int64_t(i), 0});
    outputs.push_back(out);
    if (stats) stats->push_back(stage.last_solve());
  }
  return outputs;
}

// Several frames through one configured stage on each backend.
struct Frames {
  std::vector<HostImage> cpu, cuda;
  std::vector<SolveStats> cpu_stats, cuda_stats;
};
Frames run_both(const PencilParams& p, const std::vector<HostImage>& inputs) {
  Frames f;
  const Size size{inputs[0].width, inputs[0].height};
  BufferPool pool;
  {
    PencilStage stage(p);
    PooledScratch scratch(pool, MemoryKind::host);
    stage.configure(size, Backend::cpu, scratch);
    f.cpu = run_cpu(stage, inputs, inputs.size(), &f.cpu_stats);
  }
  PencilStage stage(p);
  PooledScratch scratch(pool, MemoryKind::device);
  stage.configure(size, Backend::cuda, scratch);
  f.cuda = run_cuda(stage, inputs, 0, &f.cuda_stats);
  return f;
}

// A moving scene: a photo shifted by `step` pixels a frame.
std::vector<HostImage> moving_scene(int w, int h, int count, int step, std::mt19937_64& rng) {
  const HostImage base = test::synthetic_photo(w + step * count, h, rng);
  std::vector<HostImage> frames;
  for (int f = 0; f < count; ++f) {
    HostImage img(w, h);
    for (int y = 0; y < h; ++y)
      std::copy_n(&base.pixels[(size_t(y) * base.width + size_t(step) * f) * 4], size_t(w) * 4,
                  &img.pixels[size_t(y) * w * 4]);
    frames.push_back(img);
  }
  return frames;
}

TEST(PencilGpu, StrokeBranchIsBitExact) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  struct Case { int w, h, half, width; };
  for (const Case c : {Case{333, 217, 5, 1}, Case{640, 360, 12, 0}, Case{300, 200, 32, 1}, Case{257, 190, 64, 3},
                       Case{97, 61, 1, 2}, Case{71, 45, 3, 2}}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " " << c.w << "x" << c.h << " half " << c.half);
    const HostImage img = test::synthetic_photo(c.w, c.h, rng);
    const size_t n = size_t(c.w) * c.h;
    for (GradientForm form : {GradientForm::l1, GradientForm::l2}) {
      std::vector<uint8_t> luma(n), median(n);
      std::vector<uint16_t> grad(n), cls(n);
      std::vector<uint32_t> sp(n);
      uint32_t counts[256], range[2];
      cpu::RowScratch rows;
      rows.resize(4, c.w);
      const LineKernelSet k1 = build_line_kernels(c.half, 0), k2 = build_line_kernels(c.half, c.width);
      cpu::luma_histogram(img.view(), luma.data(), counts, rows);
      cpu::median_gradient(luma.data(), c.w, c.h, form, median.data(), grad.data());
      cpu::classify(grad.data(), c.w, c.h, k1, cls.data(), rows);
      cpu::draw(cls.data(), c.w, c.h, k2, sp.data(), range, rows);

      DeviceArray<uint8_t> din(img.pixels.data(), img.pixels.size());
      DeviceArray<uint16_t> dgrad(n), dcls(n);
      DeviceArray<uint32_t> dsp(n), drange(2), dcounts(256);
      const StrokePlan p1 = build_stroke_plan(k1), p2 = build_stroke_plan(k2);
      DeviceArray<uint32_t> w1(p1.words.data(), p1.words.size()), w2(p2.words.data(), p2.words.size());
      gpu::DeviceStrokePlan g1 = gpu::device_plan_view(p1, w1.ptr), g2 = gpu::device_plan_view(p2, w2.ptr);
      gpu::prepare_stroke_plan(g1, false);
      gpu::prepare_stroke_plan(g2, true);
      const RgbaView view{din.ptr, c.w, c.h, size_t(c.w) * 4};
      SP_CUDA_CHECK(cudaMemset(drange.ptr, 0, 8));
      SP_CUDA_CHECK(cudaMemset(dcounts.ptr, 0, 1024));
      gpu::launch_median_gradient(view, form, dgrad.ptr, nullptr);
      gpu::launch_classify(dgrad.ptr, c.w, c.h, g1, dcls.ptr, nullptr);
      gpu::launch_draw(dcls.ptr, c.w, c.h, g2, dsp.ptr, drange.ptr, nullptr);
      gpu::launch_histogram(view, dcounts.ptr, nullptr);
      SP_CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(dgrad.download(), grad);
      EXPECT_EQ(dcls.download(), cls);
      EXPECT_EQ(dsp.download(), sp);
      const std::vector<uint32_t> rg = drange.download();
      EXPECT_EQ(~rg[0], range[0]);
      EXPECT_EQ(rg[1], range[1]);
      EXPECT_EQ(dcounts.download(), std::vector<uint32_t>(counts, counts + 256));
    }
  }
}

TEST(PencilGpu, ToneLevelsAreBitExactOverFrames) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const ToneTarget target = make_tone_target({42, 29, 29});
  std::vector<float> ln_level(256), ln_j_cpu(256);
  cpu::ln_level_table(ln_level.data());
  std::vector<double> ema(256, 0.0);
  DeviceArray<double> dema(ema.data(), 256), dcdf(target.cdf.data(), 256);
  DeviceArray<float> dlevel(ln_level.data(), 256), dlnj(256);
  for (int frame = 0; frame < 4; ++frame) {
    std::vector<uint32_t> counts(256);
    double total = 0;
    for (auto& c : counts) total += (c = uint32_t(rng() % (frame + 2) == 0 ? rng() % 5000 : 0));
    counts[rng() % 256] += 1;
    total += 1;
    DeviceArray<uint32_t> dcounts(counts.data(), 256);
    cpu::tone_levels(counts.data(), total, 0.8, frame > 0, ema.data(), target, ln_level.data(), ln_j_cpu.data());
    gpu::launch_tone_levels(dcounts.ptr, total, 0.8, frame > 0, dema.ptr, dcdf.ptr, dlevel.ptr, dlnj.ptr, nullptr);
    SP_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(dema.download(), ema) << "frame " << frame;
    EXPECT_EQ(dlnj.download(), ln_j_cpu) << "frame " << frame;
  }
}

PencilParams random_params(std::mt19937_64& rng, bool color, ToneSolve solve) {
  PencilParams p;
  p.color = color;
  p.tone_solve = solve;
  p.gradient = rng() % 2 ? GradientForm::l2 : GradientForm::l1;
  p.line_length = rng() % 2 ? 0 : 5 + 2 * int(rng() % 20);
  p.line_width = int(rng() % 3);
  p.gamma_s = 0.7 + double(rng() % 100) / 50;
  p.gamma_i = 0.4 + double(rng() % 100) / 100;
  p.temporal_smoothing = rng() % 2 ? 0.0 : 0.8;
  return p;
}

TEST(PencilGpu, StageEqualsCpuGrayColourFastAndLu2012OverFrames) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (bool color : {false, true}) {
    for (ToneSolve solve : {ToneSolve::fast, ToneSolve::lu2012}) {
      const PencilParams p = random_params(rng, color, solve);
      const int w = 500 + int(rng() % 300), h = 300 + int(rng() % 200);
      SCOPED_TRACE(testing::Message() << "seed " << seed << " color " << color << " lu2012 "
                                      << (solve == ToneSolve::lu2012) << " " << w << "x" << h);
      const std::vector<HostImage> frames = moving_scene(w, h, 3, 3, rng);
      const Frames r = run_both(p, frames);
      for (size_t f = 0; f < frames.size(); ++f) {
        const test::ImageDiff d = test::compare(r.cpu[f], r.cuda[f]);
        if (solve == ToneSolve::fast) {
          EXPECT_EQ(d.differing_bytes, 0u) << "frame " << f << ", max " << d.max_abs;
        } else {
          EXPECT_GE(psnr(r.cpu[f], r.cuda[f]), 50.0) << "frame " << f;
          EXPECT_LE(d.max_abs, 3) << "frame " << f;
          EXPECT_NEAR(r.cuda_stats[f].iterations, r.cpu_stats[f].iterations, 2) << "frame " << f;
          EXPECT_LE(r.cuda_stats[f].relative_residual, p.cg_tolerance) << "frame " << f;
        }
      }
    }
  }
}

// A run that starts on the CPU while the GPU starts hands the temporal state
// over (Stage::take_history): from there the GPU gives the frames of a run
// that was on the GPU from the start, and of one on the CPU throughout.
TEST(PencilGpu, TheGpuTakesTheCpusStateOverBitForBit) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (bool color : {false, true}) {
    PencilParams p = random_params(rng, color, ToneSolve::fast);
    p.temporal_smoothing = 0.5 + double(rng() % 45) / 100;
    const int w = 300 + int(rng() % 300), h = 200 + int(rng() % 200);
    const size_t handover = 1 + rng() % 3;
    SCOPED_TRACE(testing::Message() << "seed " << seed << " color " << color << " " << w << "x" << h
                                    << " smoothing " << p.temporal_smoothing << " handover at frame " << handover);
    // A cut at the handover: the state of the frames before it is far from a first frame's.
    std::vector<HostImage> frames = moving_scene(w, h, 5, 7, rng);
    const std::vector<HostImage> before = moving_scene(w, h, int(handover), 7, rng);
    std::copy(before.begin(), before.end(), frames.begin());
    const Frames whole = run_both(p, frames);
    BufferPool pool;
    PencilStage cpu(p), gpu(p), cold(p);
    PooledScratch cpu_scratch(pool, MemoryKind::host), gpu_scratch(pool, MemoryKind::device),
        cold_scratch(pool, MemoryKind::device);
    cpu.configure({w, h}, Backend::cpu, cpu_scratch);
    gpu.configure({w, h}, Backend::cuda, gpu_scratch);
    cold.configure({w, h}, Backend::cuda, cold_scratch);
    run_cpu(cpu, frames, handover);
    gpu.take_history(cpu);
    const std::vector<HostImage> after = run_cuda(gpu, frames, handover);
    const std::vector<HostImage> without = run_cuda(cold, frames, handover);
    EXPECT_GT(test::compare(without[0], whole.cuda[handover]).differing_bytes, 0u)
        << "the earlier frames' state changes the frame at the handover";
    for (size_t f = handover; f < frames.size(); ++f) {
      EXPECT_EQ(test::compare(after[f - handover], whole.cuda[f]).differing_bytes, 0u) << "frame " << f;
      EXPECT_EQ(test::compare(after[f - handover], whole.cpu[f]).differing_bytes, 0u) << "frame " << f;
    }
  }
}

// The v3 solve works on 32x16 tiles with a 3-pixel halo: frames narrower or
// shorter than a tile, or than the halo, and ragged last tiles, agree with the
// CPU's whole-frame passes too.
TEST(PencilGpu, Lu2012SmallAndRaggedFramesEqualCpu) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  struct Case { int w, h; };
  for (const Case c : {Case{9, 7}, Case{5 + int(rng() % 30), 3 + int(rng() % 15)}, Case{33, 17},
                       Case{95 + int(rng() % 64), 41 + int(rng() % 32)}}) {
    PencilParams p = random_params(rng, rng() % 2 == 1, ToneSolve::lu2012);
    p.line_length = 3;
    p.cg_tolerance = 1e-5;
    p.cg_max_iterations = 500;
    SCOPED_TRACE(testing::Message() << "seed " << seed << " " << c.w << "x" << c.h);
    std::vector<HostImage> frames;
    const HostImage base = test::synthetic_photo(c.w + 4, c.h, rng);
    for (int f = 0; f < 3; ++f) {
      HostImage img(c.w, c.h);
      for (int y = 0; y < c.h; ++y)
        std::copy_n(&base.pixels[(size_t(y) * (c.w + 4) + 2 * f) * 4], size_t(c.w) * 4, &img.pixels[size_t(y) * c.w * 4]);
      frames.push_back(img);
    }
    const Frames r = run_both(p, frames);
    for (size_t f = 0; f < frames.size(); ++f) {
      const test::ImageDiff d = test::compare(r.cpu[f], r.cuda[f]);
      EXPECT_LE(d.max_abs, 3) << "frame " << f;
      EXPECT_NEAR(r.cuda_stats[f].iterations, r.cpu_stats[f].iterations, 1) << "frame " << f;
      EXPECT_LE(r.cuda_stats[f].relative_residual, p.cg_tolerance) << "frame " << f;
    }
  }
}

TEST(PencilGpu, RunStageHelperAgreesAndCountersReportTheSolve) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const HostImage img = test::synthetic_photo(1280, 720, rng);
  PencilParams p;
  p.tone_solve = ToneSolve::lu2012;
  PencilStage gpu_stage(p), cpu_stage(p);
  const HostImage a = test::run_stage_cuda(gpu_stage, img), b = test::run_stage_cpu(cpu_stage, img);
  EXPECT_GE(psnr(a, b), 50.0);
  const StageCounters c = gpu_stage.counters();
  ASSERT_TRUE(c.count("cg_iterations"));
  EXPECT_GT(c.at("cg_iterations"), 0);
  EXPECT_LE(c.at("cg_relative_residual"), p.cg_tolerance);
}

}  // namespace
}  // namespace sp::pencil
