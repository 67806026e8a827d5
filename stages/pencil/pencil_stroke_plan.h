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
//
// The 45 and 135 degree lines can instead be "diagonal" directions (after the
// row and column passes): every line of the kernel along the diagonal is cut
// into runs of equal weights, and each run is the difference of two entries of
// a running (prefix) sum along the diagonals of the tile, times its weight
// (pencil_stroke_diagonal.h). Lu's diagonal kernels are equal-weight along
// each diagonal except for at most one tapered tap at each end, so a kernel of
// ~(2k+1) x (2w+3) taps becomes ~(2w+3) runs plus a few single taps.
//
// The 22.5 degree families (directions 1, 3, 5, 7) can instead be "mma"
// directions: each line of the kernel along the pass axis is a Toeplitz block
// of an int8 tensor-core product (pencil_stroke_mma.h), exact like the rest.
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
constexpr int kDiagonalRecordWords = 4;  // {offset of the run's last tap, offset before its first, weight, 0}

// Whether the 45/135 degree lines use diagonal running sums: when the cost
// model says they are cheaper (automatic), or forced either way (tests).
enum class DiagonalMode { automatic, always, never };
// Which lines use int8 tensor cores: all but the 0/90 degree ones (box sums)
// where the cost model says so (automatic), only the 22.5 degree families
// 1, 3, 5, 7 where it says so (automatic_odd), those forced (always), all six
// forced (always_all), or none.
enum class MmaMode { automatic, automatic_odd, always, always_all, never };

struct StrokePlan {
  int half_length = 0;
  int pitch = 0;  // bytes per tile row: a multiple of 4 with pitch / 4 odd (conflict-free column access)
  // Records of kPlanRecordWords, 16-byte aligned: the header (ints), then the
  // weights, 4 bytes per word, tap j in byte j % 4 of word j / 4, zero-padded
  // (a box record: its one weight in word 0). The offset is relative to the
  // output's own tile byte, in the layout of the direction's pass.
  std::vector<uint32_t> words;
  std::array<int, kDirections + 1> begin{};  // records of order[i]: [begin[i], begin[i+1])
  // row directions, column directions, diagonal directions, mma row directions, mma column directions
  std::array<uint8_t, kDirections> order{};
  int row_directions = 0;
  // order[diagonal_begin..mma_begin) are diagonal directions: records of
  // kDiagonalRecordWords, offsets in uint16 entries of the prefix tile
  // (pencil_stroke_diagonal.h) relative to the output's own entry.
  int diagonal_begin = kDirections;
  // order[mma_begin..mma_column_begin) are mma directions on the row-major
  // tile, order[mma_column_begin..] on the transposed tile: one record per
  // kernel line (pencil_stroke_mma.h).
  int mma_begin = kDirections;
  int mma_column_begin = kDirections;
  // Planned work per output (for the docs/bench notes): dot products incl.
  // zero padding (a box: 1 per output), diagonal runs (2 prefix lookups
  // each), taps; and the cost model's issue slots per thread (16 outputs),
  // prefix builds included.
  double dots_per_output = 0, diagonal_runs_per_output = 0, taps_per_output = 0, cost_per_thread = 0;
  // mma instructions per 64 x 64 tile (all mma directions: lines x K blocks x 32 blocks).
  double mma_per_tile = 0;
};

StrokePlan build_stroke_plan(const LineKernelSet& kernels, DiagonalMode diagonal = DiagonalMode::automatic,
                             MmaMode mma = MmaMode::never);
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
// The same for a diagonal direction: `values` is the side x side tile
// (row-major, side = stroke_tile_side), `prefix` the prefix tile's storage
// (stroke_prefix_bytes / 2 entries, contents arbitrary: it is filled and
// walked as on the GPU); out[y * kPlanTile + x] (column-pass layout).
void stroke_plan_diagonal_model(const StrokePlan& plan, int order_index, const uint8_t* values, uint16_t* prefix,
                                uint32_t* out);
// The same for an mma direction (pencil_stroke_mma_model.cpp): `tile` as for
// stroke_plan_tile_model (the direction's pass layout); the lanes' fragments
// are built by the GPU's code and the mma is emulated from the PTX layout.
void stroke_plan_mma_model(const StrokePlan& plan, int order_index, const uint8_t* tile, uint32_t* out);

}  // namespace sp::pencil
