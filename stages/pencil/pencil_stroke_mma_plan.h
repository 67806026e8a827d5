#pragma once
// Host side of the mma directions of a StrokePlan (internal to
// pencil_stroke_plan.cpp and its tests): one record per kernel line along the
// pass axis (layout in pencil_stroke_mma.h), and what they cost.
#include <cstdint>
#include <vector>

namespace sp::pencil {

struct MmaDirection {
  std::vector<uint32_t> words;  // records, each mma_record_words(nb) long
  double cost_per_thread = 0;   // issue slots per thread of kPlanRun outputs (chunk cost units)
  int lines = 0, k_blocks = 0;  // records, and their K blocks in all
};
// The records of a direction from its dense (2k+1)^2 weights (row-major by dy),
// along rows (lines across dy, taps along dx) or along columns of the tile.
MmaDirection mma_direction(const std::vector<int>& dense, int half_length, int pitch, bool by_rows);

}  // namespace sp::pencil
