// The pencil stage's CUDA members in a CPU-only build: no CUDA state ever exists,
// so there is nothing to release, and configuring for CUDA is refused.
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "stages/pencil/pencil.h"

namespace sp::pencil {

void PencilStage::configure_cuda(ScratchAllocator&) {
  throw Error(ExitCode::unavailable, std::string("pencil on CUDA: ") + kNoCudaInBuild);
}

void PencilStage::release_cuda() {}

}  // namespace sp::pencil
