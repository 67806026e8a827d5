// The lowpoly stage's CUDA members in a CPU-only build: no CUDA state ever exists,
// so there is nothing to release, and configuring for CUDA is refused.
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "stages/lowpoly/lowpoly.h"

namespace sp::lowpoly {

void LowpolyStage::configure_cuda(ScratchAllocator&) {
  throw Error(ExitCode::unavailable, std::string("lowpoly on CUDA: ") + kNoCudaInBuild);
}

void LowpolyStage::release_cuda() {}

}  // namespace sp::lowpoly
