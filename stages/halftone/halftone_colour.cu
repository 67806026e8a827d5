// Colour stippling, CUDA side: the three dot sets run side by side, each on
// a stream of its own, then one kernel merges their renders.
#include "pipeline/cuda_check.h"
#include "pipeline/side_streams.h"
#include "stages/halftone/halftone_colour.h"

namespace sp::halftone {

namespace {

__global__ void merge_planes(RgbaView r, RgbaView g, RgbaView b, RgbaView out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= out.width) return;
  out.row32(y)[x] = merge_channels(r.row32(y)[x], g.row32(y)[x], b.row32(y)[x]);
}

}  // namespace

struct ColourHalftoneStage::ChannelStreams {
  SideStreams side{3};
};

void ColourHalftoneStage::make_channel_streams() {
  if (!channel_streams_) channel_streams_ = new ChannelStreams();
}

void ColourHalftoneStage::release_channel_streams() {
  delete channel_streams_;
  channel_streams_ = nullptr;
}

void ColourHalftoneStage::process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                                       cudaStream_t stream) {
  SideStreams& side = channel_streams_->side;
  // Each set's state carries from frame to frame on its own stream; the fork
  // orders it after this frame's input, the joins order the merge after all three.
  side.fork_from(stream);
  for (int c = 0; c < 3; ++c) {
    channels_[c]->process_cuda(in, plane(c), frame, side.stream(c));
    side.join_into(c, stream);
  }
  constexpr int kThreads = 256;
  const dim3 grid((size_.width + kThreads - 1) / kThreads, size_.height);
  merge_planes<<<grid, kThreads, 0, stream>>>(plane(0), plane(1), plane(2), out);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
