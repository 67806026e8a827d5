#pragma once
// Direct O(M^2) summation of the repulsive forces on the GPU,
//   F_a = sum_{b != a} (p_a - p_b) / |p_a - p_b|^2,
// the baseline of the seed's Table 1 (`repulsion: direct`). Positions are
// staged in shared-memory tiles; each tile's terms are summed in float and
// the tiles in double, so the result is within float rounding of the float64
// oracle direct_forces() (fastsum.h). Coincident pairs are skipped, as there.
// Each thread sums the forces on two particles, so one shared-memory load
// feeds two pairs; the reciprocal is the hardware approximation (~1 ulp).
#include <cuda_runtime.h>

#include "pipeline/scratch.h"

namespace sp::halftone {

class DirectGpu {
 public:
  // Splits the partner range into slices when there are too few particle
  // blocks to fill the GPU (small M); the slices' partial sums are added in
  // a fixed order, so the result does not depend on scheduling.
  void configure(int capacity, ScratchAllocator& scratch);
  // *count is read on the device; force[0, count) is overwritten.
  void forces(const float2* pos, const int* count, float2* force, cudaStream_t stream) const;
  int slices() const { return slices_; }

 private:
  int capacity_ = 0;
  int blocks_ = 1;
  int slices_ = 1;
  double2* partial_ = nullptr;  // slices x capacity
};

}  // namespace sp::halftone
