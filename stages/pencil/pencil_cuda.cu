// The CUDA backend's orchestration: the stroke branch runs on a second stream,
// forked from and joined back to the stage's stream by events, while the tone
// branch (histogram, matching, optional CG solve) runs on the stage's stream.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/cuda_check.h"
#include "pipeline/side_streams.h"
#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_cuda.h"

namespace sp::pencil {

struct PencilStage::CudaState {
  // Created once per stage, reused across configures.
  std::unique_ptr<SideStreams> stroke;  // the stroke branch's stream
  SolveStats* stats_host = nullptr;  // pinned; the last copied-back solve

  // Scratch (device), from the allocator at each configure.
  uint16_t* gradient = nullptr;
  uint16_t* classified = nullptr;
  uint32_t* sp = nullptr;
  uint32_t* range = nullptr;  // {~min, max}
  double* range_state = nullptr;  // 2 slots x {lo, hi}
  uint32_t* counts = nullptr;
  double* ema = nullptr;
  double* target_cdf = nullptr;
  float* ln_level = nullptr;
  float* ln_j = nullptr;
  float* ln_h = nullptr;
  uint8_t* texel_of_pixel = nullptr;  // texture laid over the frame (fixed in screen space)
  gpu::DeviceStrokePlan classify_plan, draw_plan;
  float* cg[gpu::kCgFields] = {};
  double* partials = nullptr;
  SolveStats* stats = nullptr;
  int cg_blocks = 0;
  ChebyshevCoefficients chebyshev;
};

namespace gpu {

StrokePlan choose_stroke_plan(const LineKernelSet& k, bool draw, MmaMode mma) {
  StrokePlan plan = build_stroke_plan(k, DiagonalMode::automatic, mma);
  // Step down while the plan's layout is worse than the next simpler plan's.
  for (MmaMode fewer : {MmaMode::automatic_odd, MmaMode::never}) {
    if (plan.mma_begin == kDirections) break;  // nothing on the tensor cores
    const bool has_45 = mma == MmaMode::automatic || mma == MmaMode::always_all;
    if (fewer == MmaMode::automatic_odd && !has_45) continue;
    StrokePlan simpler = build_stroke_plan(k, DiagonalMode::automatic, fewer);
    if (stroke_layout_at_least(plan, simpler, draw)) break;
    plan = std::move(simpler);
    mma = fewer;
  }
  if (plan.diagonal_begin < plan.mma_begin) {
    StrokePlan without = build_stroke_plan(k, DiagonalMode::never, mma);
    if (!stroke_layout_at_least(plan, without, draw)) plan = std::move(without);
  }
  return plan;
}

}  // namespace gpu

namespace {

template <class T>
T* upload(ScratchAllocator& scratch, const T* host, size_t count) {
  T* device = scratch.allocate_array<T>(count);
  SP_CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

// SP_PENCIL_TENSOR_CORES (a benchmark switch; the output is the same bit for
// bit): 0 none, 1 the 22.5 degree lines only, 2 all six forced where the
// layout allows, 3 all six forced whatever the layout; unset: the plan's choice.
gpu::DeviceStrokePlan upload_plan(ScratchAllocator& scratch, const LineKernelSet& k, bool draw) {
  const char* v = std::getenv("SP_PENCIL_TENSOR_CORES");
  const std::string mode = v ? v : "";
  if (!mode.empty() && mode != "0" && mode != "1" && mode != "2" && mode != "3")
    throw Error(ExitCode::usage, "pencil: SP_PENCIL_TENSOR_CORES=" + mode + ": expected 0, 1, 2 or 3 (or unset)");
  const MmaMode mma = mode == "0"   ? MmaMode::never
                      : mode == "1" ? MmaMode::automatic_odd
                      : mode == "2" || mode == "3" ? MmaMode::always_all
                                                   : MmaMode::automatic;
  const StrokePlan plan = mode == "3" ? build_stroke_plan(k, DiagonalMode::automatic, mma)
                                      : gpu::choose_stroke_plan(k, draw, mma);
  return gpu::device_plan_view(plan, upload(scratch, plan.words.data(), plan.words.size()));
}

}  // namespace

void PencilStage::configure_cuda(ScratchAllocator& scratch) {
  if (!cuda_) {
    cuda_ = new CudaState();
    cuda_->stroke = std::make_unique<SideStreams>(1);
    SP_CUDA_CHECK(cudaMallocHost(&cuda_->stats_host, sizeof(SolveStats)));
  }
  CudaState& c = *cuda_;
  *c.stats_host = SolveStats{};
  const size_t pixels = size_t(size_.width) * size_.height;
  c.gradient = scratch.allocate_array<uint16_t>(pixels);
  c.classified = scratch.allocate_array<uint16_t>(pixels);
  c.sp = scratch.allocate_array<uint32_t>(pixels);
  c.range = scratch.allocate_array<uint32_t>(2);
  c.range_state = scratch.allocate_array<double>(4);
  SP_CUDA_CHECK(cudaMemset(c.range_state, 0, 4 * sizeof(double)));
  c.counts = scratch.allocate_array<uint32_t>(kLevels);
  c.ema = scratch.allocate_array<double>(kLevels);
  SP_CUDA_CHECK(cudaMemset(c.ema, 0, kLevels * sizeof(double)));
  c.target_cdf = upload(scratch, tone_target_.cdf.data(), kLevels);
  c.ln_level = upload(scratch, ln_level_.data(), kLevels);
  c.ln_j = scratch.allocate_array<float>(kLevels);
  c.ln_h = upload(scratch, texture_.ln_table.data(), kLevels);
  {
    // The texture is fixed in screen space: resolve tiling once, not per pixel per frame.
    std::vector<uint8_t> map(pixels);
    for (int y = 0; y < size_.height; ++y)
      for (int x = 0; x < size_.width; ++x)
        map[size_t(y) * size_.width + x] = texture_.texels[texture_index(x, y, texture_.width, texture_.height)];
    c.texel_of_pixel = upload(scratch, map.data(), map.size());
  }
  c.classify_plan = upload_plan(scratch, classify_kernels_, false);
  c.draw_plan = upload_plan(scratch, draw_kernels_, true);
  gpu::prepare_stroke_plan(c.classify_plan, false);
  gpu::prepare_stroke_plan(c.draw_plan, true);
  if (params_.tone_solve == ToneSolve::lu2012) {
    for (float*& v : c.cg) v = scratch.allocate_array<float>(pixels);
    c.cg_blocks = gpu::cg_grid_blocks();
    c.chebyshev = chebyshev_coefficients();
    c.partials = scratch.allocate_array<double>(2 * size_t(c.cg_blocks) * kSolveSums);
    c.stats = scratch.allocate_array<SolveStats>(1);
    SP_CUDA_CHECK(cudaMemset(c.stats, 0, sizeof(SolveStats)));
  }
}

// The device side of configure's reset; the engine has no frame in flight.
void PencilStage::forget_history_cuda() {
  if (!cuda_) return;
  CudaState& c = *cuda_;
  *c.stats_host = SolveStats{};
  SP_CUDA_CHECK(cudaMemset(c.range_state, 0, 4 * sizeof(double)));
  SP_CUDA_CHECK(cudaMemset(c.ema, 0, kLevels * sizeof(double)));
  if (c.stats) SP_CUDA_CHECK(cudaMemset(c.stats, 0, sizeof(SolveStats)));
  // The memsets run on the legacy stream, which the frames' non-blocking streams do not wait for.
  SP_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

// The CUDA path keeps the stroke range in two slots and reads the one of its
// frame's parity (pencil_tone.cu's combine kernel); the engine has no frame in flight.
void PencilStage::take_history_cuda() {
  CudaState& c = *cuda_;
  SP_CUDA_CHECK(cudaMemcpy(c.ema, ema_histogram_.data(), kLevels * sizeof(double), cudaMemcpyHostToDevice));
  SP_CUDA_CHECK(cudaMemcpy(c.range_state + 2 * (frames_done_ & 1), stroke_range_, 2 * sizeof(double),
                           cudaMemcpyHostToDevice));
  // From pageable memory the copies may still be on the legacy stream, which the frames' streams do not wait for.
  SP_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

void PencilStage::release_cuda() {
  if (!cuda_) return;
  // Destructor path: no throwing; the stream may still hold this stage's work.
  cuda_->stroke.reset();
  if (cuda_->stats_host) cudaFreeHost(cuda_->stats_host);
  delete cuda_;
  cuda_ = nullptr;
}

void PencilStage::process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo&, cudaStream_t stream) {
  CudaState& c = *cuda_;
  const int w = in.width, h = in.height;

  // Fork: the stroke branch on its own stream.
  c.stroke->fork_from(stream);
  const cudaStream_t stroke = c.stroke->stream(0);
  SP_CUDA_CHECK(cudaMemsetAsync(c.range, 0, 2 * sizeof(uint32_t), stroke));
  gpu::launch_median_gradient(in, params_.gradient, c.gradient, stroke);
  gpu::launch_classify(c.gradient, w, h, c.classify_plan, c.classified, stroke);
  gpu::launch_draw(c.classified, w, h, c.draw_plan, c.sp, c.range, stroke);

  // Tone branch on the stage's stream.
  SP_CUDA_CHECK(cudaMemsetAsync(c.counts, 0, kLevels * sizeof(uint32_t), stream));
  gpu::launch_histogram(in, c.counts, stream);
  gpu::launch_tone_levels(c.counts, double(w) * h, params_.temporal_smoothing, have_history_, c.ema, c.target_cdf,
                          c.ln_level, c.ln_j, stream);
  gpu::CombineArgs args;
  if (params_.tone_solve == ToneSolve::lu2012) {
    gpu::CgArgs cg;
    cg.in = in;
    cg.ln_j = c.ln_j;
    cg.texel_of_pixel = c.texel_of_pixel;
    cg.ln_h_table = c.ln_h;
    cg.lambda = float(params_.lambda);
    cg.tolerance = params_.cg_tolerance;
    cg.max_iterations = params_.cg_max_iterations;
    cg.warm = have_history_ ? 1 : 0;
    cg.chebyshev = c.chebyshev;
    cg.x = c.cg[0];
    cg.p = c.cg[1];
    cg.u = c.cg[2];
    for (int b = 0; b < 2; ++b) {
      cg.r[b] = c.cg[3 + b];
      cg.s[b] = c.cg[5 + b];
      cg.w[b] = c.cg[7 + b];
    }
    cg.partials = c.partials;
    cg.stats = c.stats;
    gpu::launch_cg(cg, c.cg_blocks, stream);
    // Read by counters() later without a sync: the last frame whose copy landed.
    SP_CUDA_CHECK(cudaMemcpyAsync(c.stats_host, c.stats, sizeof(SolveStats), cudaMemcpyDeviceToHost, stream));
    args.beta = c.cg[0];
  }

  // Join and combine.
  c.stroke->join_into(0, stream);
  args.sp = c.sp;
  args.range = c.range;
  args.range_state = c.range_state;
  args.parity = frames_done_ & 1;
  args.have_history = have_history_ ? 1 : 0;
  args.ema_factor = params_.temporal_smoothing;
  args.ln_j = c.ln_j;
  args.fast_beta_scale = fast_beta_scale_;
  args.texel_of_pixel = c.texel_of_pixel;
  args.ln_h_table = c.ln_h;
  args.gamma_s = float(params_.gamma_s);
  args.gamma_i = float(params_.gamma_i);
  args.color = params_.color;
  gpu::launch_combine(in, out, args, stream);
  have_history_ = true;
  ++frames_done_;
}

SolveStats PencilStage::last_solve() const {
  if (backend_ == Backend::cuda && cuda_ && cuda_->stats_host) {
    SolveStats s;
    std::memcpy(&s, const_cast<const SolveStats*>(cuda_->stats_host), sizeof(s));
    return s;
  }
  return cpu_stats_;
}

}  // namespace sp::pencil
