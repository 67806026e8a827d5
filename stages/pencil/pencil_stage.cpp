#include <algorithm>

#include "pipeline/errors.h"
#include "pipeline/parallel.h"
#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_cpu.h"
#include "stages/pencil/pencil_math.h"
#include "stages/pencil/pencil_solve.h"

namespace sp::pencil {

struct PencilStage::CpuBuffers {
  cpu::RowScratch rows;
  uint8_t* luma = nullptr;
  uint8_t* median = nullptr;
  uint16_t* gradient = nullptr;
  uint16_t* classified = nullptr;
  uint32_t* sp = nullptr;
  uint32_t counts[kLevels] = {};
  float ln_j[kLevels] = {};
  CgVectors cg;
  double* partials = nullptr;
};

PencilStage::PencilStage(PencilParams params) : params_(std::move(params)), ema_histogram_(kLevels, 0.0) {}

PencilStage::~PencilStage() { release_cuda(); }

Size PencilStage::configure(Size input, Backend backend, ScratchAllocator& scratch) {
  if (input.width < 1 || input.height < 1) throw Error(ExitCode::config, "pencil: empty input frame");
  backend_ = backend;
  size_ = input;
  half_length_ = resolve_line_length(params_.line_length, input) / 2;
  if (classify_kernels_.half_length != half_length_) {
    classify_kernels_ = build_line_kernels(half_length_, 0);
    draw_kernels_ = build_line_kernels(half_length_, params_.line_width);
  }
  tone_target_ = make_tone_target(params_.tone_weights);
  cpu::ln_level_table(ln_level_.data());
  if (raw_texture_.texels.empty())
    raw_texture_ = params_.texture == "builtin" ? builtin_texture() : load_texture(params_.texture);
  texture_ = fit_texture(raw_texture_, params_.texture_mode, input);
  fast_beta_scale_ = float(texture_.mean_ln / texture_.mean_ln2);
  std::fill(ema_histogram_.begin(), ema_histogram_.end(), 0.0);
  have_history_ = false;
  cpu_stats_ = {};

  const size_t pixels = size_t(input.width) * input.height;
  if (backend == Backend::cpu) {
    release_cuda();
    cpu_ = std::make_unique<CpuBuffers>();
    CpuBuffers& b = *cpu_;
    b.rows.resize(std::min(input.height, 8 * worker_count()), input.width);
    b.luma = scratch.allocate_array<uint8_t>(pixels);
    b.median = scratch.allocate_array<uint8_t>(pixels);
    b.gradient = scratch.allocate_array<uint16_t>(pixels);
    b.classified = scratch.allocate_array<uint16_t>(pixels);
    b.sp = scratch.allocate_array<uint32_t>(pixels);
    if (params_.tone_solve == ToneSolve::lu2012) {
      for (float** field : {&b.cg.x, &b.cg.r, &b.cg.u, &b.cg.w, &b.cg.p, &b.cg.s, &b.cg.chebyshev[0],
                            &b.cg.chebyshev[1]})
        *field = scratch.allocate_array<float>(pixels);
      b.partials = scratch.allocate_array<double>(solve_partials_count(input.height));
    }
  } else {
    cpu_.reset();
    configure_cuda(scratch);
  }
  return input;
}

void PencilStage::process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo&) {
  CpuBuffers& b = *cpu_;
  const int w = in.width, h = in.height;
  cpu::luma_histogram(in, b.luma, b.counts, b.rows);
  cpu::median_gradient(b.luma, w, h, params_.gradient, b.median, b.gradient);
  cpu::classify(b.gradient, w, h, classify_kernels_, b.classified, b.rows);
  uint32_t range[2];
  cpu::draw(b.classified, w, h, draw_kernels_, b.sp, range, b.rows);
  cpu::tone_levels(b.counts, double(w) * h, params_.temporal_smoothing, have_history_, ema_histogram_.data(),
                   tone_target_, ln_level_.data(), b.ln_j);
  cpu::CombineInputs c;
  if (params_.tone_solve == ToneSolve::lu2012) {
    BetaSystem system;
    system.width = w;
    system.height = h;
    system.luma = b.luma;
    system.ln_j_by_luma = b.ln_j;
    system.texels = texture_.texels.data();
    system.tex_width = texture_.width;
    system.tex_height = texture_.height;
    system.ln_h_table = texture_.ln_table.data();
    system.lambda = float(params_.lambda);
    cpu_stats_ = solve_beta_cpu(system, b.cg, b.partials, have_history_, params_.cg_tolerance,
                                params_.cg_max_iterations);
    c.beta = b.cg.x;
  }
  c.sp = b.sp;
  double smoothed[2];
  smooth_stroke_range(stroke_range_, range[0], range[1], params_.temporal_smoothing, have_history_, smoothed);
  stroke_range_[0] = smoothed[0];
  stroke_range_[1] = smoothed[1];
  c.sp_lo = float(smoothed[0]);
  c.sp_hi = float(smoothed[1]);
  c.ln_j_by_luma = b.ln_j;
  c.fast_beta_scale = fast_beta_scale_;
  c.texture = &texture_;
  c.gamma_s = float(params_.gamma_s);
  c.gamma_i = float(params_.gamma_i);
  c.color = params_.color;
  cpu::combine(in, out, c);
  have_history_ = true;
  ++frames_done_;
}

// What configure resets, without its kernels, texture fit and buffers (on
// the GPU ~0.12 s a configure).
bool PencilStage::forget_history() {
  std::fill(ema_histogram_.begin(), ema_histogram_.end(), 0.0);
  stroke_range_[0] = stroke_range_[1] = 0;
  have_history_ = false;
  cpu_stats_ = {};
  frames_done_ = 0;
  if (backend_ == Backend::cuda) forget_history_cuda();
  return true;
}

void PencilStage::take_history(const Stage& from) {
  const auto* cpu = dynamic_cast<const PencilStage*>(&from);
  if (!cpu || cpu->backend_ != Backend::cpu || cpu->size_ != size_ || !hands_history_over())
    throw Error(ExitCode::internal,
                "pencil: only a fast-tone pencil stage on the CPU at the same size hands its state over");
  ema_histogram_ = cpu->ema_histogram_;
  stroke_range_[0] = cpu->stroke_range_[0];
  stroke_range_[1] = cpu->stroke_range_[1];
  have_history_ = cpu->have_history_;
  frames_done_ = cpu->frames_done_;
  if (backend_ == Backend::cuda) take_history_cuda();
}

std::optional<GpuCost> PencilStage::gpu_cost(Size in) const {
  // lu2012's conjugate gradients run up to cg_max_iterations: no bound.
  if (params_.tone_solve == ToneSolve::lu2012) return std::nullopt;
  // Half the time scales with the pixels, half with the pixels times the
  // line kernels' length (default 1/30 of the smaller side), over a floor
  // of launches that small frames show: 0.046 ms at 256x240, 0.18 at
  // 1920x1080, 1.25 at 3840x2160 (orchestration/gpu_cost_test.cpp).
  const double megapixels = double(in.width) * in.height / 1e6;
  const double length = resolve_line_length(params_.line_length, in);
  return GpuCost{0.045 + 0.05 * megapixels * (1.0 + length / 36.0), in};
}

double PencilStage::floor_bytes(Size in, Size) const {
  const double pixels = double(in.width) * in.height;
  // Read the frame and write the result (4 + 4), the gradient and its class
  // (uint16, written and read: 2 + 2 + 2 + 2) and the stroke sums (uint32: 4 + 4):
  // 24 bytes per pixel, 49.8 MB at 1920x1080. The second and third reads of the
  // input (histogram, combine) are L2 hits at that size and are not counted.
  double bytes = 24.0 * pixels;
  if (params_.tone_solve == ToneSolve::lu2012) {
    // Per CG iteration, one pass (CUDA): reads w, s, r, u, p, x and the texel,
    // writes s, r, u, w, p, x (49 B; the halo's re-reads hit L1/L2).
    const int iterations = std::max(1, last_solve().iterations);
    bytes += 49.0 * pixels * iterations;
  }
  return bytes;
}

StageCounters PencilStage::counters() const {
  if (params_.tone_solve != ToneSolve::lu2012) return {};
  const SolveStats s = last_solve();
  return {{"cg_iterations", double(s.iterations)}, {"cg_relative_residual", double(s.relative_residual)}};
}

}  // namespace sp::pencil
