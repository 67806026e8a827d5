// StageChain's CUDA path (CUDA builds only).
#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"
#include "pipeline/stage_chain.h"

namespace sp {

void StageChain::run_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                          cudaStream_t stream, const std::vector<cudaEvent_t>& marks) {
  SP_CUDA_CHECK(cudaEventRecord(marks[0], stream));
  for (size_t i = 0; i < stages_.size(); ++i) {
    const RgbaView src = i == 0 ? in : intermediate(i - 1);
    const RgbaView dst = i + 1 == stages_.size() ? out : intermediate(i);
    stages_[i]->process_cuda(src, dst, frame, stream);
    SP_CUDA_CHECK_LAUNCH();
    SP_CUDA_CHECK(cudaEventRecord(marks[i + 1], stream));
  }
}

}  // namespace sp
