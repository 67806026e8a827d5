#pragma once
// xbr: pixel-art upscaling by 2, 3 or 4 with Hyllian's xBR rules, bit-exact
// with FFmpeg's `-vf xbr=N` in `exact` mode. See stages/xbr/README.md.
#include <cstdint>
#include <vector>

#include "pipeline/cuda_handles.h"
#include "pipeline/stage.h"

namespace sp {

enum class XbrMode { exact, threshold };

struct XbrSettings {
  int scale = 2;                 // 2, 3 or 4
  XbrMode mode = XbrMode::exact;
  int threshold = 0;             // integer YUV distance; used by XbrMode::threshold
};

XbrSettings xbr_settings_from(const Params& params);
StageDescriptor make_xbr_descriptor();

// Per-frame counts of corner decisions (4 corners per input pixel).
struct XbrTallies {
  uint64_t edges = 0;   // level-1 edge rule fired
  uint64_t level2 = 0;  // level-2 (left or up) refinement taken
};

// CPU expansion of a whole image. keys: scratch of in.width*in.height words
// (the YUV key of every input pixel). tallies may be null.
void xbr_expand_cpu(const RgbaView& in, const RgbaView& out, const XbrSettings& settings, uint32_t* keys,
                    XbrTallies* tallies);

// Enqueues the CUDA expansion on `stream` (out is in scaled by settings.scale).
void xbr_expand_cuda(const RgbaView& in, const RgbaView& out, const XbrSettings& settings, cudaStream_t stream);

// Diagnostics for tests: for every input pixel, bit k (k = 0..3, FFmpeg's
// corner order bottom-right, top-right, top-left, bottom-left) is set when
// that corner took a level-2 rule; bit k+4 when it took the level-1 edge rule.
std::vector<uint8_t> xbr_decision_map(const RgbaView& in, const XbrSettings& settings);

class XbrStage final : public Stage {
 public:
  explicit XbrStage(const XbrSettings& settings) : settings_(settings) {}
  Size configure(Size input, Backend backend, ScratchAllocator& scratch) override;
  void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) override;
#if STYLEPIPE_HAS_CUDA
  void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream) override;
#endif
  // Its launches depend on the views and the configured settings only.
  bool replayable() const override { return true; }
  // One read of every input pixel (the halo re-reads hit in cache) and one
  // write of every output pixel, 4 bytes each.
  double floor_bytes(Size in, Size out) const override;
  std::optional<GpuCost> gpu_cost(Size in) const override;
  // CPU backend only: counting on the GPU would cost the hot kernel atomics.
  StageCounters counters() const override;

 private:
  XbrSettings settings_;
  Backend backend_ = Backend::cpu;
  uint32_t* keys_ = nullptr;  // CPU scratch: YUV key per input pixel
  bool counted_ = false;
  XbrTallies last_{};
};

}  // namespace sp
