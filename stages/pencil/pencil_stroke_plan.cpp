#include "stages/pencil/pencil_stroke_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace sp::pencil {

namespace {

constexpr int kChunkSizes[] = {1, 2, 4, 8};
constexpr double kExactLimit = 16777216.0;  // 2^24: floats hold every integer below it

// Issue slots of one chunk for one thread: FMAs, window loads, weight loads,
// header load + dispatch + address arithmetic.
double chunk_cost(int size) { return kPlanRun * size + (kPlanRun + size - 1) + (size + 3) / 4 + 8; }
// A box record of `length` taps: the first sum, then per output 2 loads, 2 adds and an FMA.
double box_cost(int length) { return 2.0 * length + 5.0 * kPlanRun + 10; }

struct Chunk {
  int across = 0, along = 0, size = 0;  // size < 0: box of -size equal weights (weights[0])
  std::array<int, 8> weights{};
};

// Dense (2k+1)^2 weights of one direction from its column runs.
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

// Cheapest cover of run positions [lo, hi] by chunks (DP over the run length;
// a chunk may overhang the run with zero weights, shifted to stay in [-k, k]).
// Chunks longer than the kernel side 2k + 1 are never used: shifted back, such
// a chunk would start before -k and read outside the tile's halo (the pad
// column or memory before the tile, uninitialised: 0 * NaN there is NaN).
std::vector<Chunk> chunk_run(const std::vector<int>& line, int k, int across, int lo, int hi, double* cost) {
  const int n = hi - lo + 1;
  // Equal weights: boxes, each short enough that 511 * length * weight < 2^24.
  const int weight = line[lo + k];
  bool equal = weight > 0;
  for (int p = lo; p <= hi && equal; ++p) equal = line[p + k] == weight;
  if (equal) {
    const int max_length = int((kExactLimit - 1) / (double(kGradientMask) * weight));
    const int boxes = (n + max_length - 1) / max_length;
    const double chunked = ((n + 7) / 8) * chunk_cost(8);  // estimate: 8-tap chunks
    if (boxes * box_cost((n + boxes - 1) / boxes) < chunked) {
      std::vector<Chunk> out;
      for (int b = 0, start = lo; b < boxes; ++b) {
        const int length = n / boxes + (b < n % boxes ? 1 : 0);
        Chunk c;
        c.across = across;
        c.along = start;
        c.size = -length;
        c.weights[0] = weight;
        out.push_back(c);
        *cost += box_cost(length);
        start += length;
      }
      return out;
    }
  }
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<int> pick(n + 1, 0);
  best[0] = 0;
  for (int done = 0; done < n; ++done)
    for (int size : kChunkSizes) {
      if (size > 2 * k + 1) continue;
      const int next = std::min(n, done + size);
      if (best[done] + chunk_cost(size) < best[next]) {
        best[next] = best[done] + chunk_cost(size);
        pick[next] = size;
      }
    }
  std::vector<Chunk> chunks;
  for (int end = n; end > 0;) {
    const int size = pick[end];
    const int covered = std::min(size, end);  // taps [end - covered, end) of the run
    int start = lo + end - covered;           // position of the chunk's first tap
    if (start + size - 1 > k) start = k - size + 1;  // overhang backwards instead
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

int bits(float f) {
  int i;
  std::memcpy(&i, &f, 4);
  return i;
}
float as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}

}  // namespace

int stroke_tile_side(int half_length) { return kPlanTile + 2 * half_length; }
int stroke_tile_pitch(int half_length) { return stroke_tile_side(half_length) | 1; }

StrokePlan build_stroke_plan(const LineKernelSet& k) {
  // Key of the classify argmax: total * 8 + (7 - d) must fit in uint32.
  if (double(k.max_kernel_sum) * kGradientMask * 8 >= 4294967296.0)
    throw std::invalid_argument("pencil: line kernels too large for the CUDA plan");
  StrokePlan plan;
  plan.half_length = k.half_length;
  plan.pitch = stroke_tile_pitch(k.half_length);
  std::array<std::vector<Chunk>, kDirections> chunks;
  std::array<bool, kDirections> by_rows{};
  for (int d = 0; d < kDirections; ++d) {
    double row_cost, column_cost;
    std::vector<Chunk> rows = chunk_direction(k, d, true, &row_cost);
    std::vector<Chunk> columns = chunk_direction(k, d, false, &column_cost);
    by_rows[d] = row_cost <= column_cost;
    chunks[d] = by_rows[d] ? std::move(rows) : std::move(columns);
  }
  int slot = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int d = 0; d < kDirections; ++d) {
      if (by_rows[d] != (pass == 0)) continue;
      plan.order[slot] = uint8_t(d);
      plan.begin[slot] = int(plan.words.size());
      ++slot;
      if (pass == 0) ++plan.row_directions;
      double since_flush = 0;  // weight sum accumulated in the float partial
      size_t last_header = 0;
      for (const Chunk& c : chunks[d]) {
        const int taps = c.size < 0 ? -c.size : c.size;
        double sum = 0;
        for (int j = 0; j < taps; ++j) sum += c.weights[c.size < 0 ? 0 : j];
        if (since_flush > 0 && (since_flush + sum) * kGradientMask >= kExactLimit) {
          plan.words[last_header + 2] = as_float(1);  // flush after the previous chunk
          since_flush = 0;
        }
        since_flush += sum;
        if (sum * kGradientMask >= kExactLimit) throw std::invalid_argument("pencil: chunk sum too large");
        last_header = plan.words.size();
        plan.words.push_back(as_float(c.across * plan.pitch + c.along));
        plan.words.push_back(as_float(c.size));
        plan.words.push_back(as_float(0));
        plan.words.push_back(as_float(0));
        for (int j = 0; j < kPlanRecordWords - kPlanHeaderWords; ++j)
          plan.words.push_back(j < taps && (c.size > 0 || j == 0) ? float(c.weights[j]) : 0.f);
        plan.fmas_per_output += c.size < 0 ? 3 : c.size;  // a box: ~2 adds and an FMA per output
        for (int j = 0; j < taps; ++j) plan.taps_per_output += c.weights[c.size < 0 ? 0 : j] != 0;
      }
    }
  plan.begin[kDirections] = int(plan.words.size());
  return plan;
}

uint32_t stroke_plan_response(const StrokePlan& plan, int order_index, const float* v, int gw, int x, int y) {
  const bool by_rows = order_index < plan.row_directions;
  uint32_t total = 0;
  float acc = 0;
  for (int i = plan.begin[order_index]; i < plan.begin[order_index + 1];) {
    const int offset = bits(plan.words[i]), size = bits(plan.words[i + 1]);
    const int across = int(std::floor((offset + plan.pitch / 2.0) / plan.pitch));
    const int along = offset - across * plan.pitch;
    auto value = [&](int j) {
      return by_rows ? v[size_t(y + across) * gw + (x + along + j)] : v[size_t(y + along + j) * gw + (x + across)];
    };
    if (size < 0) {  // box: exact float sum, then one FMA
      float box = 0;
      for (int j = 0; j < -size; ++j) box += value(j);
      acc = std::fma(plan.words[i + kPlanHeaderWords], box, acc);
    } else {
      for (int j = 0; j < size; ++j) acc = std::fma(plan.words[i + kPlanHeaderWords + j], value(j), acc);
    }
    if (bits(plan.words[i + 2])) {
      total += uint32_t(acc);
      acc = 0;
    }
    i += kPlanRecordWords;
  }
  return total + uint32_t(acc);
}

}  // namespace sp::pencil
