// Colour stippling, CUDA side: the three dot sets run side by side, each on
// a stream of its own, then one kernel merges their renders.
#include <array>

#include "pipeline/cuda_check.h"
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
  int device = 0;
  cudaEvent_t forked = nullptr;
  std::array<cudaStream_t, 3> streams{};
  std::array<cudaEvent_t, 3> done{};

  ChannelStreams() {
    SP_CUDA_CHECK(cudaGetDevice(&device));
    SP_CUDA_CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
    for (int c = 0; c < 3; ++c) {
      SP_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[c], cudaStreamNonBlocking));
      SP_CUDA_CHECK(cudaEventCreateWithFlags(&done[c], cudaEventDisableTiming));
    }
  }
  ChannelStreams(const ChannelStreams&) = delete;
  ChannelStreams& operator=(const ChannelStreams&) = delete;
  // No throw: a destructor's path. Made on `device`, whichever is current now.
  ~ChannelStreams() {
    int current = 0;
    cudaGetDevice(&current);
    cudaSetDevice(device);
    for (int c = 0; c < 3; ++c) {
      if (streams[c]) cudaStreamSynchronize(streams[c]), cudaStreamDestroy(streams[c]);
      if (done[c]) cudaEventDestroy(done[c]);
    }
    if (forked) cudaEventDestroy(forked);
    cudaSetDevice(current);
  }
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
  ChannelStreams& side = *channel_streams_;
  // Each set's state carries from frame to frame on its own stream; the fork
  // orders it after this frame's input, the joins order the merge after all three.
  SP_CUDA_CHECK(cudaEventRecord(side.forked, stream));
  for (int c = 0; c < 3; ++c) {
    SP_CUDA_CHECK(cudaStreamWaitEvent(side.streams[c], side.forked, 0));
    channels_[c]->process_cuda(in, plane(c), frame, side.streams[c]);
    SP_CUDA_CHECK(cudaEventRecord(side.done[c], side.streams[c]));
    SP_CUDA_CHECK(cudaStreamWaitEvent(stream, side.done[c], 0));
  }
  constexpr int kThreads = 256;
  const dim3 grid((size_.width + kThreads - 1) / kThreads, size_.height);
  merge_planes<<<grid, kThreads, 0, stream>>>(plane(0), plane(1), plane(2), out);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
