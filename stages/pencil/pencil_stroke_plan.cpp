#include "stages/pencil/pencil_stroke_plan.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "stages/pencil/pencil_stroke_diagonal.h"
#include "stages/pencil/pencil_stroke_diagonal_plan.h"
#include "stages/pencil/pencil_stroke_mma.h"
#include "stages/pencil/pencil_stroke_mma_plan.h"
#include "stages/pencil/pencil_stroke_simd.h"

namespace sp::pencil {

namespace {

constexpr int kChunkSizes[] = {4, 8, 16};

// Issue slots of one chunk for one thread: a dot product per output and 4
// taps, a funnel shift for 3 outputs in 4, the window's shared loads (counted
// twice: the shared-memory pipe is the scarce one), weights, header, dispatch.
double chunk_cost(int size) {
  const int groups = size / 4;
  return kPlanRun * groups * 1.75 + 2.0 * ((size + kPlanRun + 1) / 4 + 1) + 8;
}
// A box record of `length` taps: byte loads of the first sum, then per output
// 2 loads (counted twice), 2 adds and a multiply-add.
double box_cost(int length) { return 2.0 * length + 7.0 * kPlanRun + 10; }

struct Chunk {
  int across = 0, along = 0, size = 0;  // size < 0: box of -size equal weights (weights[0])
  std::array<int, 16> weights{};
};

// Cheapest cover of run positions [lo, hi] by chunks (DP over the run length).
// A chunk starts at or after -k (so it never reads before the tile); where it
// is longer than the rest of the run it overhangs with zero weights, shifted
// back while that keeps it at or after -k, else past +k (bytes read there are
// multiplied by 0).
std::vector<Chunk> chunk_run(const std::vector<int>& line, int k, int across, int lo, int hi, double* cost) {
  const int n = hi - lo + 1;
  const int weight = line[lo + k];
  bool equal = weight > 0;
  for (int p = lo; p <= hi && equal; ++p) equal = line[p + k] == weight;
  if (equal && box_cost(n) < ((n + 15) / 16) * chunk_cost(16) && box_cost(n) < ((n + 3) / 4) * chunk_cost(4)) {
    Chunk c;
    c.across = across;
    c.along = lo;
    c.size = -n;
    c.weights[0] = weight;
    *cost += box_cost(n);
    return {c};
  }
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<int> pick(n + 1, 0), from(n + 1, 0);
  best[0] = 0;
  for (int done = 0; done < n; ++done)
    for (int size : kChunkSizes) {
      const int next = std::min(n, done + size);
      if (best[done] + chunk_cost(size) < best[next]) {
        best[next] = best[done] + chunk_cost(size);
        pick[next] = size;
        from[next] = done;
      }
    }
  std::vector<Chunk> chunks;
  for (int end = n; end > 0;) {
    const int size = pick[end];
    const int covered = end - from[end];  // taps [end - covered, end) of the run
    int start = lo + end - covered;           // position of the chunk's first tap
    if (start + size - 1 > k) start = std::max(-k, k - size + 1);
    Chunk c;
    c.across = across;
    c.along = start;
    c.size = size;
    for (int j = 0; j < size; ++j) {
      const int pos = start + j;
      const bool mine = pos >= lo + end - covered && pos < lo + end;  // others: covered elsewhere or empty
      c.weights[j] = mine ? line[pos + k] : 0;
    }
    chunks.push_back(c);
    end -= covered;
  }
  std::reverse(chunks.begin(), chunks.end());
  *cost += best[n];
  return chunks;
}

// All chunks of direction d with the tile axis `by_rows` (runs along x).
std::vector<Chunk> chunk_direction(const LineKernelSet& k, int d, bool by_rows, double* cost) {
  const int h = k.half_length, side = 2 * h + 1;
  const std::vector<int> dense = dense_kernel(k, d);
  std::vector<Chunk> all;
  *cost = 0;
  for (int across = -h; across <= h; ++across) {
    std::vector<int> line(side);
    for (int along = -h; along <= h; ++along)
      line[along + h] = by_rows ? dense[size_t(across + h) * side + (along + h)]
                                : dense[size_t(along + h) * side + (across + h)];
    int lo = h + 1, hi = -h - 1;
    for (int along = -h; along <= h; ++along)
      if (line[along + h]) lo = std::min(lo, along), hi = std::max(hi, along);
    if (hi < lo) continue;
    for (const Chunk& c : chunk_run(line, h, across, lo, hi, cost)) all.push_back(c);
  }
  return all;
}

}  // namespace

std::vector<int> dense_kernel(const LineKernelSet& k, int d) {
  const int side = 2 * k.half_length + 1;
  std::vector<int> dense(size_t(side) * side, 0);
  for (int i = k.begin[d]; i < k.begin[d + 1]; ++i) {
    const LineRun& r = k.runs[i];
    for (int j = 0; j < r.len; ++j)
      dense[size_t(r.lo + j + k.half_length) * side + (r.dx + k.half_length)] = k.weights[r.offset + j];
  }
  return dense;
}

StrokePlan build_stroke_plan(const LineKernelSet& k, DiagonalMode diagonal, MmaMode mma) {
  // Key of the classify argmax: total * 8 + (7 - d) must fit in uint32.
  if (double(k.max_kernel_sum) * kGradientMask * 8 >= 4294967296.0)
    throw std::invalid_argument("pencil: line kernels too large for the CUDA plan");
  StrokePlan plan;
  plan.half_length = k.half_length;
  plan.pitch = stroke_tile_pitch(k.half_length);
  std::array<std::vector<Chunk>, kDirections> chunks;
  std::array<std::vector<DiagonalRun>, kDirections> runs;
  std::array<MmaDirection, kDirections> mmas;
  // 0 rows, 1 columns, 2 diagonal runs, 3 mma on rows, 4 mma on columns
  constexpr int kPasses = 5;
  std::array<int, kDirections> pass{};
  for (int d = 0; d < kDirections; ++d) {
    double row_cost, column_cost;
    std::vector<Chunk> rows = chunk_direction(k, d, true, &row_cost);
    std::vector<Chunk> columns = chunk_direction(k, d, false, &column_cost);
    pass[d] = row_cost <= column_cost ? 0 : 1;
    chunks[d] = pass[d] == 0 ? std::move(rows) : std::move(columns);
    const double dp4a_cost = std::min(row_cost, column_cost);
    double cost = dp4a_cost;
    if ((d == 2 || d == 6) && diagonal != DiagonalMode::never) {
      runs[d] = diagonal_runs(dense_kernel(k, d), k.half_length, diagonal_step(d));
      const double diagonal_total = diagonal_cost(runs[d].size(), k.half_length);
      if (diagonal == DiagonalMode::always || diagonal_total < cost) pass[d] = 2, cost = diagonal_total;
    }
    const bool all_six = mma == MmaMode::automatic || mma == MmaMode::always_all;
    if (mma != MmaMode::never && (d % 2 == 1 || (all_six && d % 4 == 2))) {
      const std::vector<int> dense = dense_kernel(k, d);
      MmaDirection by_rows = mma_direction(dense, k.half_length, plan.pitch, true);
      MmaDirection by_columns = mma_direction(dense, k.half_length, plan.pitch, false);
      const bool rows_cheaper = by_rows.cost_per_thread <= by_columns.cost_per_thread;
      MmaDirection& best = rows_cheaper ? by_rows : by_columns;
      // The 45/135 degree lines against dp4a only: on the H100 the tensor cores
      // beat the diagonal running sums wherever both were measured (pencil v5,
      // docs/perf.md; the classify kernel refills the prefix tile from L2), which
      // this issue-slot model does not see.
      const double rival = d % 2 == 1 ? cost : dp4a_cost;
      if (mma == MmaMode::always || mma == MmaMode::always_all || best.cost_per_thread < rival) {
        pass[d] = rows_cheaper ? 3 : 4;
        cost = best.cost_per_thread;
        mmas[d] = std::move(best);
      }
    }
    plan.cost_per_thread += cost;
  }
  int slot = 0;
  std::array<int, kPasses> first{};
  for (int p = 0; p < kPasses; ++p) {
    first[p] = slot;
    for (int d = 0; d < kDirections; ++d) {
      if (pass[d] != p) continue;
      plan.order[slot] = uint8_t(d);
      plan.begin[slot] = int(plan.words.size());
      ++slot;
      if (p == 2) {
        append_diagonal_records(runs[d], k.half_length, diagonal_step(d), plan.words);
        plan.diagonal_runs_per_output += double(runs[d].size());
        for (const DiagonalRun& r : runs[d]) plan.taps_per_output += r.hi - r.lo + 1;
        continue;
      }
      if (p >= 3) {
        plan.words.insert(plan.words.end(), mmas[d].words.begin(), mmas[d].words.end());
        plan.mma_per_tile += double(mmas[d].k_blocks) * (kPlanTile / 16) * (kPlanTile / 8);
        for (size_t i = 0; i < mmas[d].words.size();) {  // nonzero weight bytes of each record
          const int record = int(mmas[d].words[i + 2]);
          for (int w = kMmaHeaderWords; w < record; ++w)
            for (int b = 0; b < 4; ++b) plan.taps_per_output += ((mmas[d].words[i + w] >> (8 * b)) & 255u) != 0;
          i += size_t(record);
        }
        continue;
      }
      for (const Chunk& c : chunks[d]) {
        const bool is_box = c.size < 0;
        const int taps = is_box ? -c.size : c.size;
        plan.words.push_back(uint32_t(c.across * plan.pitch + c.along));
        plan.words.push_back(uint32_t(c.size));
        plan.words.push_back(0);
        plan.words.push_back(0);
        for (int word = 0; word < kPlanRecordWords - kPlanHeaderWords; ++word) {
          uint32_t packed = 0;
          for (int b = 0; b < 4 && !is_box; ++b)
            if (4 * word + b < taps) packed |= uint32_t(c.weights[4 * word + b]) << (8 * b);
          plan.words.push_back(is_box ? (word == 0 ? uint32_t(c.weights[0]) : 0u) : packed);
        }
        plan.dots_per_output += is_box ? 1 : taps / 4;
        for (int j = 0; j < taps; ++j) plan.taps_per_output += c.weights[is_box ? 0 : j] != 0;
      }
    }
  }
  plan.row_directions = first[1];
  plan.diagonal_begin = first[2];
  plan.mma_begin = first[3];
  plan.mma_column_begin = first[4];
  plan.begin[kDirections] = int(plan.words.size());
  return plan;
}

void stroke_plan_tile_model(const StrokePlan& plan, int order_index, const uint8_t* tile, uint32_t* out) {
  const int k = plan.half_length;
  for (int across = 0; across < kPlanTile; ++across)
    for (int along0 = 0; along0 < kPlanTile; along0 += kPlanRun) {
      uint32_t total[kPlanRun];
      simd::direction_total<true>(tile, (across + k) * plan.pitch + along0 + k, plan.words.data(),
                                  plan.begin[order_index], plan.begin[order_index + 1], total);
      for (int r = 0; r < kPlanRun; ++r) out[(along0 + r) * kPlanTile + across] = total[r];
    }
}

}  // namespace sp::pencil

namespace sp::pencil {

void stroke_plan_diagonal_model(const StrokePlan& plan, int order_index, const uint8_t* values, uint16_t* prefix,
                                uint32_t* out) {
  const int k = plan.half_length, side = stroke_tile_side(k), step = diagonal_step(plan.order[order_index]);
  // The GPU's fill (every pixel and pad entry once), then its walk (one pair of lines per thread).
  for (int ty = 0; ty < side; ++ty)
    for (int tx = 0; tx < side; ++tx) simd::prefix_store(prefix, k, step, tx, ty, values[size_t(ty) * side + tx]);
  for (int i = 0; i < simd::prefix_pad_count(k); ++i) simd::prefix_zero_pad(prefix, k, step, i);
  for (int pair = 0; pair < side; ++pair) simd::prefix_walk_pair(prefix, k, step, pair);
  for (int x = 0; x < kPlanTile; ++x)
    for (int y0 = 0; y0 < kPlanTile; y0 += kPlanRun) {
      uint32_t total[kPlanRun];
      simd::diagonal_total<true>(prefix, prefix_entry(k, step, x + k, y0 + k), stroke_prefix_pitch(k),
                                 plan.words.data(), plan.begin[order_index], plan.begin[order_index + 1], total);
      for (int r = 0; r < kPlanRun; ++r) out[(y0 + r) * kPlanTile + x] = total[r];
    }
}

}  // namespace sp::pencil
