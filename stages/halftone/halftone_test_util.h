#pragma once
// Helpers of the halftone tests: independent float64 ink, blurred comparison,
// and a runner that keeps one configuration over several frames (video).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "pipeline/buffer_pool.h"
#include "pipeline/stage.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/halftone.h"
#include "tests/support/test_support.h"

#if STYLEPIPE_HAS_CUDA
#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"
#include "stages/halftone/fastsum_gpu.h"
#endif

namespace sp::halftone {

// Ink of a pixel on the default white background with black dots: 1 - luma.
inline double test_ink(const uint8_t* p) { return 1.0 - (0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]) / 255.0; }

inline double test_ink_sum(const test::HostImage& img) {
  double s = 0;
  for (size_t i = 0; i < img.pixels.size(); i += 4) s += test_ink(&img.pixels[i]);
  return s;
}

#if STYLEPIPE_HAS_CUDA
template <class T>
inline T* to_device(const std::vector<T>& v) {
  T* d = nullptr;
  SP_CUDA_CHECK(cudaMalloc(&d, sizeof(T) * std::max<size_t>(v.size(), 1)));
  SP_CUDA_CHECK(cudaMemcpy(d, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
inline std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> v(n);
  SP_CUDA_CHECK(cudaMemcpy(v.data(), d, sizeof(T) * n, cudaMemcpyDeviceToHost));
  return v;
}

#endif

// A fast-summation plan (m = p = 5) for `count` dots on a w x h frame, with
// the stage's neighbours inside the near-field radius, as it chooses it.
inline FastsumPlan test_fastsum_plan(int w, int h, int count) {
  FastsumSettings s;
  s.near_radius_px = std::sqrt(kDefaultNearNeighbours / (M_PI * count / (w * h)));
  return make_fastsum_plan(w, h, s);
}

#if STYLEPIPE_HAS_CUDA
// The GPU fast summation on `pts`: the dots in the order its sort leaves them
// (stable, by cell) and the forces on them in that order.
struct GpuFastsumResult {
  std::vector<float2> sorted, force;
};
inline GpuFastsumResult gpu_fastsum(const FastsumPlan& plan, const std::vector<float2>& pts, bool exact = false) {
  const int count = int(pts.size());
  BufferPool pool;
  PooledScratch scratch(pool, MemoryKind::device);
  FastsumGpu gpu;
  gpu.configure(plan, count, scratch, exact);
  gpu.use_exact_sums(exact);
  float2* d_pos = to_device(pts);
  int* d_count = to_device(std::vector<int>{count});
  float2 *d_sorted = nullptr, *d_force = nullptr;
  SP_CUDA_CHECK(cudaMalloc(&d_sorted, sizeof(float2) * count));
  SP_CUDA_CHECK(cudaMalloc(&d_force, sizeof(float2) * count));
  gpu.sort(d_pos, d_sorted, d_count, nullptr);
  gpu.forces(d_sorted, d_count, d_force, nullptr);
  GpuFastsumResult r{to_host(d_sorted, count), to_host(d_force, count)};
  for (void* p : {static_cast<void*>(d_pos), static_cast<void*>(d_count), static_cast<void*>(d_sorted),
                  static_cast<void*>(d_force)})
    SP_CUDA_CHECK(cudaFree(p));
  return r;
}

#endif

// Points of an image drawn with density = ink (rejection sampling).
inline std::vector<float2> ink_points(const test::HostImage& img, int count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> ux(0.f, img.width - 1e-3f), uy(0.f, img.height - 1e-3f), u(0.f, 1.f);
  std::vector<float2> pts;
  while (int(pts.size()) < count) {
    const float x = ux(rng), y = uy(rng);
    if (u(rng) < test_ink(&img.pixels[(size_t(int(y)) * img.width + int(x)) * 4])) pts.push_back({x, y});
  }
  return pts;
}

// Separable Gaussian blur (edges clamped) of a float image.
inline std::vector<double> gaussian(const std::vector<double>& v, int w, int h, double sigma) {
  const int r = int(std::ceil(3 * sigma));
  std::vector<double> k(2 * r + 1), tmp(v.size()), out(v.size());
  double sum = 0;
  for (int i = -r; i <= r; ++i) sum += k[i + r] = std::exp(-i * i / (2 * sigma * sigma));
  for (double& x : k) x /= sum;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double s = 0;
      for (int i = -r; i <= r; ++i) s += k[i + r] * v[size_t(y) * w + std::clamp(x + i, 0, w - 1)];
      tmp[size_t(y) * w + x] = s;
    }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double s = 0;
      for (int i = -r; i <= r; ++i) s += k[i + r] * tmp[size_t(std::clamp(y + i, 0, h - 1)) * w + x];
      out[size_t(y) * w + x] = s;
    }
  return out;
}

// Mean absolute difference of the blurred ink of the original and of the halftone.
inline double blurred_error(const test::HostImage& original, const test::HostImage& halftone, double sigma) {
  const int w = original.width, h = original.height;
  std::vector<double> a(size_t(w) * h), b(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = test_ink(&original.pixels[4 * i]);
    b[i] = test_ink(&halftone.pixels[4 * i]);
  }
  a = gaussian(a, w, h, sigma);
  b = gaussian(b, w, h, sigma);
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(a[i] - b[i]);
  return s / a.size();
}

// The stage settings of the `repulsion: direct` tests.
inline Params direct_params(int iterations) {
  Params p = halftone_default_params();
  p.set("iterations", int64_t(iterations));
  p.set("shake", 0.0);
  p.set("repulsion", std::string("direct"));
  return p;
}

// Configures a stage once and runs frames through it (CPU, or CUDA in CUDA builds).
class StageRunner {
 public:
  StageRunner(Stage& stage, int w, int h, Backend backend)
      : stage_(stage), backend_(backend),
        scratch_(pool_, backend == Backend::cuda ? MemoryKind::device : MemoryKind::host) {
    size_ = stage.configure({w, h}, backend, scratch_);
#if STYLEPIPE_HAS_CUDA
    if (backend == Backend::cuda) {
      SP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      SP_CUDA_CHECK(cudaMalloc(&d_in_, size_t(w) * h * 4));
      SP_CUDA_CHECK(cudaMalloc(&d_out_, size_t(size_.width) * size_.height * 4));
    }
#endif
  }
  ~StageRunner() {
#if STYLEPIPE_HAS_CUDA
    if (backend_ == Backend::cuda) {
      cudaStreamSynchronize(stream_);
      cudaFree(d_in_);
      cudaFree(d_out_);
      cudaStreamDestroy(stream_);
    }
#endif
  }
  test::HostImage process(const test::HostImage& in, int64_t index, double time_seconds = 0) {
    test::HostImage out(size_.width, size_.height);
    FrameInfo info;
    info.index = index;
    info.time_seconds = time_seconds;
    if (backend_ == Backend::cpu) {
      stage_.process_cpu(in.view(), out.view(), info);
      return out;
    }
#if STYLEPIPE_HAS_CUDA
    SP_CUDA_CHECK(cudaMemcpyAsync(d_in_, in.pixels.data(), in.pixels.size(), cudaMemcpyHostToDevice, stream_));
    stage_.process_cuda({d_in_, in.width, in.height, in.pitch}, {d_out_, out.width, out.height, out.pitch}, info,
                        stream_);
    SP_CUDA_CHECK(cudaMemcpyAsync(out.pixels.data(), d_out_, out.pixels.size(), cudaMemcpyDeviceToHost, stream_));
    SP_CUDA_CHECK(cudaStreamSynchronize(stream_));
#endif
    return out;
  }

 private:
  Stage& stage_;
  Backend backend_;
  BufferPool pool_;
  PooledScratch scratch_;
  Size size_;
  cudaStream_t stream_ = nullptr;
  uint8_t* d_in_ = nullptr;
  uint8_t* d_out_ = nullptr;
};

// Dots equal to the bit, index by index.
inline size_t same_dots(const std::vector<float2>& a, const std::vector<float2>& b) {
  size_t same = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) same += a[i].x == b[i].x && a[i].y == b[i].y;
  return same;
}

// Dots of `a` with no dot of `b` within 0.01 px.
inline int unmatched_dots(const std::vector<float2>& a, const std::vector<float2>& b) {
  int far = 0;
  for (const float2& p : a) {
    float best = 1e9f;
    for (const float2& q : b) best = std::min(best, (p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y));
    far += best > 1e-4f;
  }
  return far;
}

#if STYLEPIPE_HAS_CUDA
// A few iterations of `p` on the CPU and on CUDA over one synthetic photo:
// iterations amplify float differences slowly, so the dot sets still agree
// to 0.01 px for all but 1 in 200 dots. `cpu_counters` gets the CPU stage's.
inline void expect_cuda_dots_track_cpu(const Params& p, uint64_t seed, StageCounters* cpu_counters = nullptr) {
  std::mt19937_64 rng(seed);
  const test::HostImage img = test::synthetic_photo(120, 90, rng);
  HalftoneStage cpu(parse_halftone_params(p)), gpu(parse_halftone_params(p));
  test::run_stage_cpu(cpu, img);
  StageRunner runner(gpu, img.width, img.height, Backend::cuda);
  runner.process(img, 0);
  if (cpu_counters) *cpu_counters = cpu.counters();
  const auto pc = cpu.particles(), pg = gpu.particles();
  ASSERT_EQ(pc.size(), pg.size());
  const int far = unmatched_dots(pc, pg);
  EXPECT_LE(far, int(pc.size() / 200)) << far << " of " << pc.size();
}
#endif

// Relative RMS of an attraction field (fx, fy) against lambda times the
// float64 direct sum, on every step_x-th column and step_y-th row from row y0.
template <class Field>
double attraction_error_vs_direct(const std::vector<float>& ink, int w, int h, float lambda, const Field& fx,
                                  const Field& fy, int step_x, int step_y, int y0 = 0) {
  double err = 0, ref = 0;
  for (int y = y0; y < h; y += step_y)
    for (int x = 0; x < w; x += step_x) {
      double dx, dy;
      direct_attraction(ink.data(), w, h, x, y, dx, dy);
      const size_t i = size_t(y) * w + x;
      err += std::pow(fx[i] - lambda * dx, 2) + std::pow(fy[i] - lambda * dy, 2);
      ref += std::pow(lambda * dx, 2) + std::pow(lambda * dy, 2);
    }
  return std::sqrt(err / ref);
}

// Video helpers of the convergence tests (video_tolerance).
// A w x h window panning right by `step` pixels a frame over a wider photo.
inline std::vector<test::HostImage> panning_clip(int w, int h, int frames, int step, std::mt19937_64& rng) {
  const test::HostImage wide = test::synthetic_photo(w + frames * step, h, rng);
  std::vector<test::HostImage> clip;
  for (int f = 0; f < frames; ++f) {
    test::HostImage frame(w, h);
    for (int y = 0; y < h; ++y)
      std::memcpy(&frame.pixels[size_t(y) * frame.pitch], &wide.pixels[size_t(y) * wide.pitch + size_t(f) * step * 4],
                  size_t(w) * 4);
    clip.push_back(std::move(frame));
  }
  return clip;
}

struct ClipQuality {
  double blurred_error = 0;  // mean over the warm frames after the first few
  double frame_change = 0;   // mean abs between consecutive outputs (0..255), same frames
  double iterations = 0;     // mean per warm frame
};

// A clip's outputs through one halftone stage (and, with `counters`, the
// stage's counters after its last frame).
inline std::vector<test::HostImage> halftone_clip(const std::vector<test::HostImage>& clip, const Params& p,
                                                  Backend backend, StageCounters* counters = nullptr) {
  HalftoneStage stage(parse_halftone_params(p));
  StageRunner runner(stage, clip[0].width, clip[0].height, backend);
  std::vector<test::HostImage> outs;
  for (size_t f = 0; f < clip.size(); ++f) outs.push_back(runner.process(clip[f], int64_t(f)));
  if (counters) *counters = stage.counters();
  return outs;
}

// Frames from here on are measured: the first ones settle from the cold start.
constexpr size_t kFirstMeasuredFrame = 4;

// Mean blurred error between two clips' frames from kFirstMeasuredFrame on.
inline double mean_blurred_error(const std::vector<test::HostImage>& a, const std::vector<test::HostImage>& b) {
  double sum = 0;
  for (size_t f = kFirstMeasuredFrame; f < a.size(); ++f) sum += blurred_error(a[f], b[f], 2.0);
  return sum / double(a.size() - kFirstMeasuredFrame);
}

inline Params video_clip_params(double tolerance, int far_field_every) {
  Params p = halftone_default_params();
  p.set("far_field_every", int64_t(far_field_every));
  p.set("iterations", int64_t(30));
  p.set("video_iterations", int64_t(10));
  p.set("video_tolerance", tolerance);
  return p;
}

inline ClipQuality clip_quality(const std::vector<test::HostImage>& clip, const Params& p, Backend backend) {
  StageCounters counters;
  const std::vector<test::HostImage> outs = halftone_clip(clip, p, backend, &counters);
  ClipQuality q;
  q.blurred_error = mean_blurred_error(clip, outs);
  for (size_t f = kFirstMeasuredFrame; f < outs.size(); ++f) q.frame_change += test::compare(outs[f - 1], outs[f]).mean_abs;
  q.frame_change /= double(outs.size() - kFirstMeasuredFrame);
  q.iterations = counters.at("iterations_warm_mean");
  return q;
}

inline ClipQuality run_clip(const std::vector<test::HostImage>& clip, double tolerance, Backend backend,
                            int far_field_every = 1) {
  return clip_quality(clip, video_clip_params(tolerance, far_field_every), backend);
}

// Video coherence helpers (hold_distance, warm births).
// The photo with its ink scaled by `darkness` (a fade to white).
inline test::HostImage faded(const test::HostImage& photo, double darkness) {
  test::HostImage frame = photo;
  for (size_t i = 0; i < frame.pixels.size(); i += 4)
    for (int c = 0; c < 3; ++c) frame.pixels[i + c] = uint8_t(255 - std::lround((255 - frame.pixels[i + c]) * darkness));
  return frame;
}

// A still photo with one square of fresh noise every frame (as in testsrc2).
struct PatchClip {
  std::vector<test::HostImage> frames;
  int x0 = 0, y0 = 0, side = 0;
  bool near_patch(float x, float y, float margin) const {
    return x > x0 - margin && x < x0 + side + margin && y > y0 - margin && y < y0 + side + margin;
  }
};

inline PatchClip patch_clip(int w, int h, int frames, std::mt19937_64& rng) {
  PatchClip clip;
  clip.side = w / 6;
  clip.x0 = int(rng() % uint64_t(w - clip.side));
  clip.y0 = int(rng() % uint64_t(h - clip.side));
  const test::HostImage still = test::synthetic_photo(w, h, rng);
  for (int f = 0; f < frames; ++f) {
    test::HostImage frame = still;
    for (int y = clip.y0; y < clip.y0 + clip.side; ++y)
      for (int x = clip.x0; x < clip.x0 + clip.side; ++x) {
        const uint32_t v = uint32_t(rng() % 256);
        frame.view().row32(y)[x] = 0xFF000000u | v | v << 8 | v << 16;
      }
    clip.frames.push_back(std::move(frame));
  }
  return clip;
}

inline Params held_video_params(double hold) {
  Params p = video_clip_params(0.0, 3);
  p.set("accuracy_m", int64_t(3));
  p.set("hold_distance", hold);
  return p;
}

// Share of the pixels away from the patch that repeat exactly from frame to
// frame, over the measured frames.
inline double still_share(const PatchClip& clip, const std::vector<test::HostImage>& outs, float margin) {
  size_t same = 0, all = 0;
  for (size_t f = kFirstMeasuredFrame; f < outs.size(); ++f)
    for (int y = 0; y < outs[f].height; ++y)
      for (int x = 0; x < outs[f].width; ++x) {
        if (clip.near_patch(float(x), float(y), margin)) continue;
        ++all;
        same += outs[f].view().row32(y)[x] == outs[f - 1].view().row32(y)[x];
      }
  return double(same) / double(all);
}

}  // namespace sp::halftone
