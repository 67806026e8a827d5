#pragma once
// scale: resizes the frame to width x height, or by a factor, with nearest,
// bilinear or area filtering (geometry and arithmetic: scale_math.h).
// `factor: 1` (or the input's own size) is an exact copy.
#include "pipeline/cuda_handles.h"
#include "pipeline/stage.h"
#include "stages/scale/scale_math.h"

namespace sp {

struct ScaleSettings {
  int width = 0;   // 0: derived (from height keeping the aspect ratio, or from factor)
  int height = 0;  // 0: likewise
  double factor = 1.0;
  ScaleFilter filter = ScaleFilter::bilinear;
};

ScaleSettings scale_settings_from(const Params& params);
StageDescriptor make_scale_descriptor();

// Output size for an input size; throws sp::Error (config) when a side would
// exceed the supported 16384.
Size scale_output_size(const ScaleSettings& settings, Size input);

class ScaleStage final : public Stage {
 public:
  explicit ScaleStage(const ScaleSettings& settings) : settings_(settings) {}
  Size configure(Size input, Backend backend, ScratchAllocator& scratch) override;
  void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) override;
#if STYLEPIPE_HAS_CUDA
  void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream) override;
#endif
  // Its launches depend on the views and the configured settings only.
  bool replayable() const override { return true; }
  // Nearest and bilinear read at most the input pixels they sample.
  double floor_bytes(Size in, Size out) const override;
  std::optional<GpuCost> gpu_cost(Size in) const override;

 private:
  void check_views(const RgbaView& in, const RgbaView& out) const;
  bool identity() const { return input_ == output_; }

  ScaleSettings settings_;
  Size input_, output_;
  void* x_taps_ = nullptr;  // CPU backend: per output column / row taps
  void* y_taps_ = nullptr;
};

}  // namespace sp
