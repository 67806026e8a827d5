#pragma once
// How the CUDA backend walks the line kernels (host-side plan, tested on the CPU).
//
// A block holds a square tile of the stroke input (one byte per pixel, halo
// half_length) in shared memory; each thread owns kPlanRun consecutive outputs
// along a row ("row" directions: near-horizontal lines, row-major tile) or
// along a column ("column" directions: near-vertical lines, the transposed
// tile). A kernel is cut into runs of taps along that same axis and each run
// into chunks of 4, 8 or 16 taps: a chunk loads the aligned tile words under
// its kPlanRun + size - 1 bytes into registers once, and each output takes its
// taps four at a time as one byte dot product (dp4a) of a funnel-shifted word
// and a word of four weights. A long run of equal weights (the horizontal and
// vertical lines) becomes one "box" record instead: a sliding sum along the
// thread's outputs. Which axis a direction uses and how runs are chunked is
// chosen by a cost model (dot products, shifts, shared loads, per-chunk
// overhead), per kernel set.
//
// Exactness: values (gradients <= 255) and weights (<= 255) are bytes and
// every sum is a uint32 integer sum, so the result is the integer convolution
// bit for bit (pencil_stroke_simd.h holds the arithmetic, shared with the CPU
// model below).
#include <array>
#include <cstdint>
#include <vector>

#include "pipeline/hd.h"
#include "stages/pencil/pencil_kernels.h"

namespace sp::pencil {

constexpr int kPlanTile = 64;  // outputs per tile side
constexpr int kPlanRun = 16;   // outputs per thread
constexpr int kPlanHeaderWords = 4;   // {byte offset, code (4/8/16 taps, or -length of a box run), 0, 0}
constexpr int kPlanRecordWords = 8;   // header + 4 words of 4 byte weights
// Bytes after the tile that a chunk's zero-weight overhang may read (never used).
constexpr int kTileSlackBytes = 64;

struct StrokePlan {
  int half_length = 0;
  int pitch = 0;  // bytes per tile row: a multiple of 4 with pitch / 4 odd (conflict-free column access)
  // Records of kPlanRecordWords, 16-byte aligned: the header (ints), then the
  // weights, 4 bytes per word, tap j in byte j % 4 of word j / 4, zero-padded
  // (a box record: its one weight in word 0). The offset is relative to the
  // output's own tile byte, in the layout of the direction's pass.
  std::vector<uint32_t> words;
  std::array<int, kDirections + 1> begin{};  // records of order[i]: [begin[i], begin[i+1])
  std::array<uint8_t, kDirections> order{};  // row directions first, ascending within each pass
  int row_directions = 0;
  // Planned work per output (for the docs/bench notes): dot products incl.
  // zero padding (a box: 1 per output), taps.
  double dots_per_output = 0, taps_per_output = 0;
};

StrokePlan build_stroke_plan(const LineKernelSet& kernels);
SP_HD int stroke_tile_side(int half_length) { return kPlanTile + 2 * half_length; }
// Bytes per tile row: a multiple of 4 with pitch / 4 odd.
SP_HD int stroke_tile_pitch(int half_length) { return 4 * (((stroke_tile_side(half_length) + 3) / 4) | 1); }
// The byte tile: side rows of pitch bytes, then the slack; a multiple of 16.
SP_HD int stroke_tile_bytes(int half_length) {
  return (stroke_tile_side(half_length) * stroke_tile_pitch(half_length) + kTileSlackBytes + 15) / 16 * 16;
}

// CPU model of one block's pass for direction order[order_index]: `tile` is
// the byte tile in that pass's layout (stroke_tile_bytes, 4-byte aligned);
// out[along * kPlanTile + across] receives the response at each output (along
// the pass axis, across it), computed by the GPU's own arithmetic. For tests.
void stroke_plan_tile_model(const StrokePlan& plan, int order_index, const uint8_t* tile, uint32_t* out);

}  // namespace sp::pencil
