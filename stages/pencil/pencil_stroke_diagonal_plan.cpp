#include "stages/pencil/pencil_stroke_diagonal_plan.h"

#include "stages/pencil/pencil_stroke_diagonal.h"

namespace sp::pencil {

std::vector<DiagonalRun> diagonal_runs(const std::vector<int>& dense, int half_length, int step) {
  const int k = half_length, side = 2 * k + 1;
  std::vector<DiagonalRun> runs;
  for (int line = -2 * k; line <= 2 * k; ++line) {
    DiagonalRun open;
    bool is_open = false;
    for (int t = -k; t <= k + 1; ++t) {
      const int dy = step * t + line;
      const int weight = t <= k && dy >= -k && dy <= k ? dense[size_t(dy + k) * side + (t + k)] : 0;
      if (is_open && weight == open.weight) {
        open.hi = t;
        continue;
      }
      if (is_open) runs.push_back(open);
      is_open = weight > 0;
      open = {t, t, line, weight};
    }
  }
  return runs;
}

// Per record and thread: 2 lookups per output (shared loads counted twice, as
// in chunk_cost), a subtract, a mask and a multiply-add, plus the header. The
// prefix tile: every pixel is filled (source load, mask, store) and walked
// (load, add, store) once by the block's 256 threads, between 3 barriers.
double diagonal_cost(size_t runs, int half_length) {
  const double side = stroke_tile_side(half_length);
  return double(runs) * (kPlanRun * 7.0 + 4) + side * side * 9.0 / 256 + 60;
}

void append_diagonal_records(const std::vector<DiagonalRun>& runs, int half_length, int step,
                             std::vector<uint32_t>& words) {
  const int pitch = stroke_prefix_pitch(half_length);
  for (const DiagonalRun& r : runs) {
    // Entry offsets relative to the output: (dx, dy) is dy * pitch + dx entries away.
    const int last = (step * r.hi + r.line) * pitch + r.hi;
    const int before = (step * (r.lo - 1) + r.line) * pitch + (r.lo - 1);
    words.push_back(uint32_t(last));
    words.push_back(uint32_t(before));
    words.push_back(uint32_t(r.weight));
    words.push_back(0);
  }
}

}  // namespace sp::pencil
