#pragma once
// How the CUDA backend walks the line kernels (host-side plan, tested on the CPU).
//
// A block holds a square tile of the stroke input (float, halo half_length) in
// shared memory; each thread owns kPlanRun consecutive outputs along a row
// ("row" directions: near-horizontal lines, row-major tile) or along a column
// ("column" directions: near-vertical lines, the transposed tile). A kernel is
// cut into runs of taps along that same axis and each run into chunks of 1, 2,
// 4 or 8 taps: one chunk loads kPlanRun + size - 1 tile values into registers
// and does kPlanRun * size FMAs, so every shared load feeds up to `size` taps.
// A long run of equal weights (the horizontal and vertical lines) becomes one
// "box" record instead: a sliding sum along the thread's outputs.
// Which axis a direction uses and how runs are chunked is chosen by a cost
// model (FMAs + shared loads + per-chunk overhead), per kernel set.
//
// Exactness: values (<= 511) and weights (<= 255) are integers, so every FMA
// and partial sum is an exact float while it stays below 2^24. A chunk carries
// a `flush` mark where the running weight sum would let 511 * sum reach 2^24:
// the float partial is then moved into a uint32 total. The result equals the
// integer convolution bit for bit.
#include <array>
#include <cstdint>
#include <vector>

#include "stages/pencil/pencil_kernels.h"

namespace sp::pencil {

constexpr int kPlanTile = 64;  // outputs per tile side
constexpr int kPlanRun = 16;   // outputs per thread
constexpr int kPlanHeaderWords = 4;   // {offset, size (or -length of a box run), flush, 0}
constexpr int kPlanRecordWords = 12;  // header + up to 8 weights

struct StrokePlan {
  int half_length = 0;
  int pitch = 0;  // floats per tile row (odd: conflict-free column access)
  // Chunk records of kPlanRecordWords, 16-byte aligned: 4 header words (ints,
  // bit-cast) then the weights, zero-padded (a box record: its one weight). The offset is relative to the
  // output's own tile position, in the layout of the direction's pass.
  std::vector<float> words;
  std::array<int, kDirections + 1> begin{};  // records of order[i]: [begin[i], begin[i+1])
  std::array<uint8_t, kDirections> order{};  // row directions first, ascending within each pass
  int row_directions = 0;
  // Planned work per output (for the docs/bench notes): FMAs incl. zero padding, taps.
  double fmas_per_output = 0, taps_per_output = 0;
};

StrokePlan build_stroke_plan(const LineKernelSet& kernels);
int stroke_tile_side(int half_length);  // kPlanTile + 2 half_length
int stroke_tile_pitch(int half_length);

// CPU model of the CUDA arithmetic (float FMAs, flushes) at one output of a
// zero-padded value grid `v` (width gw, origin at (ox, oy) = output (0, 0)).
// Returns the direction's total. For tests.
uint32_t stroke_plan_response(const StrokePlan& plan, int order_index, const float* v, int gw, int x, int y);

}  // namespace sp::pencil
