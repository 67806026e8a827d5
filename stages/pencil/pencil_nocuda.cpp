// The pencil stage's CUDA members in a CPU-only build: no CUDA state ever
// exists, so there is nothing to release, configuring for CUDA is refused, and
// the solver's statistics are the CPU backend's (as pencil_cuda.cu gives them
// without CUDA state).
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "stages/pencil/pencil.h"

namespace sp::pencil {

void PencilStage::configure_cuda(ScratchAllocator&) {
  throw Error(ExitCode::unavailable, std::string("pencil on CUDA: ") + kNoCudaInBuild);
}

void PencilStage::forget_history_cuda() {}

void PencilStage::take_history_cuda() {}

void PencilStage::release_cuda() {}

SolveStats PencilStage::last_solve() const { return cpu_stats_; }

}  // namespace sp::pencil
