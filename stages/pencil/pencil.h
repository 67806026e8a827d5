#pragma once
#include <algorithm>
// Pencil drawing after Lu, Xu and Jia, "Combining Sketch and Tone for Pencil
// Drawing Production" (NPAR 2012), on the CPU and on CUDA. See README.md.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/cuda_handles.h"
#include "pipeline/stage.h"
#include "stages/pencil/pencil_kernels.h"
#include "stages/pencil/pencil_texture.h"
#include "stages/pencil/pencil_tone.h"

namespace sp::pencil {

enum class GradientForm { l1, l2 };
enum class ToneSolve { fast, lu2012 };

struct PencilParams {
  bool color = false;
  GradientForm gradient = GradientForm::l1;
  int line_length = 0;  // pixels; 0 = 1/30 of the smaller image side
  int line_width = 1;   // half-width of the second-pass (drawing) kernel, Lu's `width`
  double gamma_s = 1.0;
  double gamma_i = 0.6;
  std::array<double, 3> tone_weights = {52, 37, 11};  // bright : mid : dark
  std::string texture = "builtin";
  TextureMode texture_mode = TextureMode::tile;
  ToneSolve tone_solve = ToneSolve::fast;
  double lambda = 0.2;
  double cg_tolerance = 1e-4;
  int cg_max_iterations = 100;
  double temporal_smoothing = 0.0;  // EMA factor of the source histogram; 0 = per frame
};

StageDescriptor make_pencil_descriptor();
// The parameter table's defaults as Params (independent of the config loader).
Params pencil_default_params();
PencilParams parse_pencil_params(const Params& p);
// Line length in pixels for a frame size (resolves 0 = auto); always odd, >= 3.
int resolve_line_length(int line_length, Size size);

// Per-frame statistics of the beta solve (lu2012 mode).
struct SolveStats {
  int iterations = 0;
  float relative_residual = 0;
};

class PencilStage final : public Stage {
 public:
  explicit PencilStage(PencilParams params);
  ~PencilStage() override;

  Size configure(Size input, Backend backend, ScratchAllocator& scratch) override;
  void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) override;
#if STYLEPIPE_HAS_CUDA
  void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                    cudaStream_t stream) override;
#endif
  bool is_temporal() const override {
    return params_.temporal_smoothing > 0 || params_.tone_solve == ToneSolve::lu2012;
  }
  // The histogram's EMA forgets its start; lu2012's warm-started solve needs one frame.
  int warmup_frames() const override {
    return std::max(ema_warmup_frames(params_.temporal_smoothing), params_.tone_solve == ToneSolve::lu2012 ? 1 : 0);
  }
  bool forget_history() override;
  // The state is the histogram's EMA and the stroke range's, which both
  // backends keep in the same doubles; lu2012's warm start is a CG solution,
  // which the backends do not give to the bit.
  bool hands_history_over() const override { return params_.tone_solve == ToneSolve::fast; }
  void take_history(const Stage& from) override;
  double floor_bytes(Size in, Size out) const override;
  std::optional<GpuCost> gpu_cost(Size in) const override;
  StageCounters counters() const override;

  const PencilParams& params() const { return params_; }
  // Last solve's statistics (CPU: exact; CUDA: the last frame whose copy-back completed).
  SolveStats last_solve() const;

 private:
  void configure_cuda(ScratchAllocator& scratch);
  void forget_history_cuda();
  void take_history_cuda();  // uploads the host copy take_history made
  void release_cuda();

  PencilParams params_;
  Backend backend_ = Backend::cpu;
  Size size_;
  int half_length_ = 0;
  LineKernelSet classify_kernels_;  // first pass: 1-pixel lines
  LineKernelSet draw_kernels_;      // second pass: lines of half-width line_width
  ToneTarget tone_target_;
  PencilTexture raw_texture_;  // as loaded or generated
  PencilTexture texture_;      // fitted to the frame
  std::array<float, kLevels> ln_level_{};
  float fast_beta_scale_ = 0;  // E[ln H] / E[ln^2 H], see README ("fast" mode)
  std::vector<double> ema_histogram_;  // CPU backend's EMA state
  double stroke_range_[2] = {0, 0};    // CPU backend's smoothed stroke range
  bool have_history_ = false;          // EMA / warm start state is valid
  SolveStats cpu_stats_;
  int frames_done_ = 0;

  struct CpuBuffers;
  std::unique_ptr<CpuBuffers> cpu_;
  struct CudaState;
  CudaState* cuda_ = nullptr;  // owned; defined and freed in pencil_cuda.cu
};

}  // namespace sp::pencil
