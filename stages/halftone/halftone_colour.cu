// Colour stippling, CUDA side: the three dot sets run one after another on
// the frame's stream, then one kernel merges their renders.
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

void ColourHalftoneStage::process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                                       cudaStream_t stream) {
  for (int c = 0; c < 3; ++c) channels_[c]->process_cuda(in, plane(c), frame, stream);
  constexpr int kThreads = 256;
  const dim3 grid((size_.width + kThreads - 1) / kThreads, size_.height);
  merge_planes<<<grid, kThreads, 0, stream>>>(plane(0), plane(1), plane(2), out);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::halftone
