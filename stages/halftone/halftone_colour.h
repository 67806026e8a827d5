#pragma once
// Colour stippling (`channels: cmy | rgb`): one electrostatic dot set per
// colour channel, each a mono HalftoneStage whose ink is that channel's
// component, drawn in its own ink; the three renders are merged by taking
// channel c from the render of set c. On white paper with C, M, Y inks
// (subtractive) the C render only darkens R, M only G, Y only B; on black
// with R, G, B light (additive) set c only lights component c; either way
// component c of the result is component c of render c.
#include <array>
#include <memory>

#include "stages/halftone/halftone.h"

namespace sp::halftone {

// The mono settings of channel c (0..2): its ink, colours, seed and points_out name.
HalftoneSettings channel_settings(const HalftoneSettings& s, int c);

class ColourHalftoneStage final : public Stage {
 public:
  explicit ColourHalftoneStage(const HalftoneSettings& settings);
  ~ColourHalftoneStage() override;
  ColourHalftoneStage(const ColourHalftoneStage&) = delete;
  ColourHalftoneStage& operator=(const ColourHalftoneStage&) = delete;

  Size configure(Size input, Backend backend, ScratchAllocator& scratch) override;
  void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) override;
#if STYLEPIPE_HAS_CUDA
  void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream) override;
#endif
  bool is_temporal() const override { return true; }
  int warmup_frames() const override;
  double warmup_seconds() const override { return channels_[0]->warmup_seconds(); }
  std::string state_lost_at_seams() const override { return channels_[0]->state_lost_at_seams(); }
  void set_seams(const SegmentSeams& seams) override;
  double floor_bytes(Size in, Size out) const override;
  StageCounters counters() const override;

  const HalftoneStage& channel(int c) const { return *channels_[c]; }

 private:
  RgbaView plane(int c) const { return {planes_[c], size_.width, size_.height, size_t(size_.width) * 4}; }
  // CUDA: the three dot sets are independent, and one set alone leaves the
  // GPU idle between its many small launches: each runs on a stream of its
  // own, forked from the frame's stream and joined back before the merge.
  struct ChannelStreams;
  void make_channel_streams();  // at configure, on the engine's device
  void release_channel_streams();

  ColourMode mode_;
  std::array<std::unique_ptr<HalftoneStage>, 3> channels_;
  std::array<uint8_t*, 3> planes_{};  // each channel's render (RGBA, scratch)
  Size size_;
  ChannelStreams* channel_streams_ = nullptr;  // CUDA only
};

// Pixel of the merged render: component c from planes[c], opaque.
SP_HD uint32_t merge_channels(uint32_t r, uint32_t g, uint32_t b) {
  return (r & 0xFFu) | (g & 0xFF00u) | (b & 0xFF0000u) | 0xFF000000u;
}

}  // namespace sp::halftone
