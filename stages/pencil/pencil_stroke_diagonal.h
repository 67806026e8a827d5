#pragma once
// The arithmetic of a diagonal StrokePlan direction (45 or 135 degrees),
// compiled by nvcc for the stroke kernels and by g++ for the plan's CPU model.
//
// The prefix tile holds, for every pixel (i, j) of the side x side byte tile,
// P(i, j) = g(i, j) + P(i - 1, j - s) mod 2^16: the running sum along the
// line of step (1, s) through it (s = +1 for 45 degrees, dy = dx; s = -1 for
// 135 degrees), starting where that line enters the tile. A run of taps
// t = lo..hi at (dx, dy) = (t, s t + m) sums to P(last tap) - P(one step
// before the first): two lookups, whatever the run's length. The sums are
// kept mod 2^16 in uint16 entries (half the shared memory of uint32): a run
// sums at most 255 * 129 < 2^16, so the masked difference is exact.
//
// Layout: pixel (i, j) is entry (j + row0) * pitch + i + 1, with row0 = 1 for
// s = +1 and 0 for s = -1, so the step before the tile's first column or
// first (s = +1) / last (s = -1) row lands on a zero pad entry. pitch / 2 is
// odd: lanes on consecutive rows hit different banks.
#include <cstdint>

#include "pipeline/hd.h"
#include "stages/pencil/pencil_stroke_plan.h"
#include "stages/pencil/pencil_stroke_simd.h"

namespace sp::pencil {

SP_HD int stroke_prefix_pitch(int half_length) { return 2 * (((stroke_tile_side(half_length) + 2) / 2) | 1); }
SP_HD int stroke_prefix_rows(int half_length) { return stroke_tile_side(half_length) + 1; }
SP_HD int stroke_prefix_bytes(int half_length) {
  return (stroke_prefix_rows(half_length) * stroke_prefix_pitch(half_length) * 2 + 15) / 16 * 16;
}
SP_HD int prefix_row0(int step) { return step > 0 ? 1 : 0; }
// Entry of tile pixel (i, j); i or j may be one step outside the tile (a pad entry).
SP_HD int prefix_entry(int half_length, int step, int i, int j) {
  return (j + prefix_row0(step)) * stroke_prefix_pitch(half_length) + i + 1;
}
// The diagonal direction's line step: 45 degrees (direction 2) runs along
// dy = dx, 135 degrees (direction 6) along dy = -dx.
SP_HD int diagonal_step(int direction) { return direction == 2 ? 1 : -1; }

namespace simd {

// Stores tile value v of pixel (tx, ty) (filling: every pixel once, plus the pads).
SP_HD void prefix_store(uint16_t* prefix, int half_length, int step, int tx, int ty, uint32_t v) {
  prefix[prefix_entry(half_length, step, tx, ty)] = uint16_t(v);
}
// Zero pad entry `index` of 2 * side + 1: the column before the tile (rows of
// the prefix tile), then the row before its first (s = +1) or after its last
// (s = -1) tile row.
SP_HD int prefix_pad_count(int half_length) { return 2 * stroke_tile_side(half_length) + 1; }
SP_HD void prefix_zero_pad(uint16_t* prefix, int half_length, int step, int index) {
  const int side = stroke_tile_side(half_length), pitch = stroke_prefix_pitch(half_length);
  if (index <= side) {
    prefix[index * pitch] = 0;
  } else {
    const int row = step > 0 ? 0 : side;
    prefix[row * pitch + (index - side)] = 0;
  }
}

// Turns line `line` (0 .. 2 side - 2) of the filled tile into running sums, in place.
SP_HD int prefix_line_count(int half_length) { return 2 * stroke_tile_side(half_length) - 1; }
SP_HD void prefix_walk_line(uint16_t* prefix, int half_length, int step, int line) {
  const int side = stroke_tile_side(half_length), pitch = stroke_prefix_pitch(half_length);
  // s = +1: line i - j = line - (side - 1); s = -1: line i + j = line. Start at the smallest i.
  int i, j;
  if (step > 0) {
    const int delta = line - (side - 1);
    i = delta > 0 ? delta : 0;
    j = i - delta;
  } else {
    i = line > side - 1 ? line - (side - 1) : 0;
    j = line - i;
  }
  const int length = step > 0 ? (side - (i > j ? i : j)) : (j + 1 < side - i ? j + 1 : side - i);
  uint16_t* at = prefix + prefix_entry(half_length, step, i, j);
  const int stride = 1 + step * pitch;
  uint32_t sum = 0;
  int n = 0;
  // Four loads before the four stores: one shared-memory latency per 4 entries, not per entry.
  for (; n + 4 <= length; n += 4, at += 4 * stride) {
    const uint32_t a = at[0], b = at[stride], c = at[2 * stride], d = at[3 * stride];
    at[0] = uint16_t(sum += a);
    at[stride] = uint16_t(sum += b);
    at[2 * stride] = uint16_t(sum += c);
    at[3 * stride] = uint16_t(sum += d);
  }
  for (; n < length; ++n, at += stride) {
    sum += *at;
    *at = uint16_t(sum);
  }
}

// Lines `pair` and `pair` + side (pair < side) are together side entries
// long: walking them as one job balances the threads of a block.
SP_HD void prefix_walk_pair(uint16_t* prefix, int half_length, int step, int pair) {
  prefix_walk_line(prefix, half_length, step, pair);
  if (pair + stroke_tile_side(half_length) < prefix_line_count(half_length))
    prefix_walk_line(prefix, half_length, step, pair + stroke_tile_side(half_length));
}

// A diagonal direction's response at the thread's kPlanRun outputs, one per
// row from `base` (the prefix entry of its first output): per record, the
// weight times the masked difference of two entries.
template <bool kShared>
SP_HD void diagonal_total(const uint16_t* prefix, int base, int pitch, const uint32_t* plan, int begin, int end,
                          uint32_t (&total)[kPlanRun]) {
SP_PENCIL_UNROLL
  for (int r = 0; r < kPlanRun; ++r) total[r] = 0u;
  for (int i = begin; i < end; i += kDiagonalRecordWords) {
    const Head run = load_head<kShared>(plan + i);  // {last tap, before the first, weight, 0}
    const uint16_t* last = prefix + base + run.offset;
    const uint16_t* before = prefix + base + run.code;
    const uint32_t weight = uint32_t(run.word2);
SP_PENCIL_UNROLL
    for (int r = 0; r < kPlanRun; ++r)
      total[r] += weight * ((uint32_t(last[r * pitch]) - uint32_t(before[r * pitch])) & 0xFFFFu);
  }
}

}  // namespace simd
}  // namespace sp::pencil
