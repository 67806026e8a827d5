// Colour stippling: three mono dot sets (see halftone_colour.h), CPU side.
#include "stages/halftone/halftone_colour.h"

#include "pipeline/parallel.h"

namespace sp::halftone {

HalftoneSettings channel_settings(const HalftoneSettings& s, int c) {
  HalftoneSettings t = s;
  t.channels = ColourMode::mono;
  t.ink_channel = c;
  const bool cmy = s.channels == ColourMode::cmy;
  // CMY: white paper, the ink absorbs component c. RGB: black, the dot emits component c.
  t.background = cmy ? std::array<double, 3>{255, 255, 255} : std::array<double, 3>{0, 0, 0};
  t.dot_color = t.background;
  t.dot_color[c] = cmy ? 0 : 255;
  // Own random streams per channel (user seeds are < 2^32), so that equal
  // channel inks (greys) do not stack their dots.
  t.seed = s.seed + (uint64_t(c + 1) << 32);
  if (!t.points_out.empty()) {
    const char* suffix[2][3] = {{"_r", "_g", "_b"}, {"_c", "_m", "_y"}};
    t.points_out.insert(t.points_out.size() - 4, suffix[cmy][c]);  // before .svg / .csv
  }
  return t;
}

int ColourHalftoneStage::warmup_frames() const { return channels_[0]->warmup_frames(); }

void ColourHalftoneStage::set_seams(const SegmentSeams& seams) {
  for (auto& channel : channels_) channel->set_seams(seams);
}

ColourHalftoneStage::ColourHalftoneStage(const HalftoneSettings& settings) : mode_(settings.channels) {
  for (int c = 0; c < 3; ++c) channels_[c] = std::make_unique<HalftoneStage>(channel_settings(settings, c));
}

ColourHalftoneStage::~ColourHalftoneStage() { release_channel_streams(); }

Size ColourHalftoneStage::configure(Size input, Backend backend, ScratchAllocator& scratch) {
  size_ = input;
  for (int c = 0; c < 3; ++c) {
    channels_[c]->configure(input, backend, scratch);
    planes_[c] = scratch.allocate_array<uint8_t>(size_t(input.width) * input.height * 4);
  }
  if (backend == Backend::cuda) make_channel_streams();
  return input;
}

#if !STYLEPIPE_HAS_CUDA
void ColourHalftoneStage::make_channel_streams() {}
void ColourHalftoneStage::release_channel_streams() {}
#endif

void ColourHalftoneStage::process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) {
  for (int c = 0; c < 3; ++c) channels_[c]->process_cpu(in, plane(c), frame);
  const RgbaView r = plane(0), g = plane(1), b = plane(2);
  parallel_for(size_.height, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < size_.width; ++x)
        out.row32(y)[x] = merge_channels(r.row32(y)[x], g.row32(y)[x], b.row32(y)[x]);
  });
}

double ColourHalftoneStage::floor_bytes(Size in, Size out) const {
  double bytes = 0;
  for (const auto& ch : channels_) bytes += ch->floor_bytes(in, in);  // each reads the frame, writes its plane
  return bytes + 4.0 * (3.0 * in.width * in.height + double(out.width) * out.height);  // the merge
}

StageCounters ColourHalftoneStage::counters() const {
  const char* names[2][3] = {{"r", "g", "b"}, {"c", "m", "y"}};
  StageCounters out;
  double dots = 0;
  for (int c = 0; c < 3; ++c) {
    const StageCounters one = channels_[c]->counters();
    for (const auto& [key, value] : one) out[key + "_" + names[mode_ == ColourMode::cmy][c]] = value;
    dots += one.at("dots");
  }
  out["dots"] = dots;
  return out;
}

}  // namespace sp::halftone
