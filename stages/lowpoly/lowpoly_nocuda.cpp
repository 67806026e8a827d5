// The lowpoly stage's CUDA members in a CPU-only build: no CUDA state ever
// exists, so there is nothing to release, configuring for CUDA is refused, and
// the readers (lowpoly_cuda_access.cu in CUDA builds) give what the CPU backend
// keeps, as they do there without CUDA state.
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "stages/lowpoly/lowpoly.h"

namespace sp::lowpoly {

void LowpolyStage::configure_cuda(ScratchAllocator&) {
  throw Error(ExitCode::unavailable, std::string("lowpoly on CUDA: ") + kNoCudaInBuild);
}

void LowpolyStage::release_cuda() {}

StageCounters LowpolyStage::counters() const { return cpu_counters_; }

const std::vector<Triangle>& LowpolyStage::mesh() const { return mesh_.triangles(); }

std::vector<int32_t> LowpolyStage::voronoi_labels() const { return cpu_labels_; }

SquareStats LowpolyStage::square_stats() const { return cpu_square_stats_; }

int64_t LowpolyStage::mesh_fallbacks() const { return mesh_.squares_fallbacks(); }

}  // namespace sp::lowpoly
