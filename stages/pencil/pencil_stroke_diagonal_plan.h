#pragma once
// Host side of the diagonal directions of a StrokePlan (internal to
// pencil_stroke_plan.cpp and its tests): a 45/135 degree kernel cut into runs
// of equal weights along its diagonal lines, and what they cost.
#include <cstdint>
#include <vector>

#include "stages/pencil/pencil_kernels.h"

namespace sp::pencil {

// Dense (2k+1)^2 weights of direction d, row-major by dy (from the kernel's column runs).
std::vector<int> dense_kernel(const LineKernelSet& k, int d);

// Taps t = lo..hi at (dx, dy) = (t, step * t + line), all of weight `weight` (> 0).
struct DiagonalRun {
  int lo = 0, hi = 0, line = 0, weight = 0;
};
// Every nonzero tap of the dense kernel in exactly one run; each run is a
// maximal stretch of equal weights along its line.
std::vector<DiagonalRun> diagonal_runs(const std::vector<int>& dense, int half_length, int step);
// Issue slots per thread (kPlanRun outputs) of a diagonal direction with
// `runs` runs, its prefix tile's fill and walk included (same units as the
// chunk cost model in pencil_stroke_plan.cpp).
double diagonal_cost(size_t runs, int half_length);
// Appends the runs' records (kDiagonalRecordWords each) to `words`.
void append_diagonal_records(const std::vector<DiagonalRun>& runs, int half_length, int step,
                             std::vector<uint32_t>& words);

}  // namespace sp::pencil
