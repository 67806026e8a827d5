#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/stage_chain.h"
#include "pipeline/stage_chain_events.h"

namespace sp {

void create_order_events(std::vector<cudaEvent_t>&) {
  throw Error(ExitCode::unavailable, std::string("stage lanes: ") + kNoCudaInBuild);
}

// The public Chain's CUDA branch names it in every build; a CPU session never takes it.
void StageChain::run_cuda(const RgbaView&, const RgbaView&, const FrameInfo&, cudaStream_t,
                          const std::vector<cudaEvent_t>&, int) {
  throw Error(ExitCode::unavailable, std::string("the chain on cuda: ") + kNoCudaInBuild);
}

// None were made.
void destroy_order_events(const std::vector<cudaEvent_t>&) noexcept {}

}  // namespace sp
