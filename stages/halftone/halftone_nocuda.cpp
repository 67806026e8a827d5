// The halftone stage's CUDA members in a CPU-only build: no CUDA state ever
// exists (cuda_ stays null), so they answer as halftone_cuda.cu does without
// one, and configuring for CUDA is refused.
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "stages/halftone/halftone.h"

namespace sp::halftone {

void HalftoneStage::configure_cuda(ScratchAllocator&) {
  throw Error(ExitCode::unavailable, std::string("halftone on CUDA: ") + kNoCudaInBuild);
}

void HalftoneStage::release_cuda() {}

std::vector<float2> HalftoneStage::particles_cuda() const { return {}; }

void HalftoneStage::add_profile_counters(StageCounters&) const {}

FrameNumbers HalftoneStage::numbers_cuda() const { return {}; }

}  // namespace sp::halftone
