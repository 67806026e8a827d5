// StageChain's CUDA path (CUDA builds only).
#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"
#include "pipeline/frame_graphs.h"
#include "pipeline/stage_chain.h"
#include "pipeline/stage_chain_events.h"

namespace sp {

void create_order_events(std::vector<cudaEvent_t>& events) {
  for (cudaEvent_t& e : events) SP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

void destroy_order_events(const std::vector<cudaEvent_t>& events) noexcept {
  for (cudaEvent_t e : events) cudaEventDestroy(e);
}

void StageChain::run_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                          cudaStream_t stream, const std::vector<cudaEvent_t>& marks, int lane) {
  const bool timed = !marks.empty();
  if (timed) record_event(marks[0], stream);
  for (size_t i = 0; i < stages_.size(); ++i) {
    StageLanes& s = stages_[i];
    const RgbaView src = i == 0 ? in : intermediate(i - 1, lane);
    const RgbaView dst = i + 1 == stages_.size() ? out : intermediate(i, lane);
    const bool ordered = s.shared() && lanes_ > 1;
    if (ordered && s.last_done) {
      SP_CUDA_CHECK(cudaStreamWaitEvent(stream, s.last_done, 0));
      // The wait for the previous frame is no stage's work: the first stage's
      // time starts after it. (Further in, it counts to the stage before.)
      if (i == 0 && timed) record_event(marks[0], stream);
    }
    stage(i, lane).process_cuda(src, dst, frame, stream);
    SP_CUDA_CHECK_LAUNCH();
    if (ordered) {
      s.last_done = s.done[size_t(lane)];
      SP_CUDA_CHECK(cudaEventRecord(s.last_done, stream));
    }
    if (timed) record_event(marks[i + 1], stream);
  }
}

}  // namespace sp
