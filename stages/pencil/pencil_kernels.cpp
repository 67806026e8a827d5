#include "stages/pencil/pencil_kernels.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sp::pencil {

namespace {

double clamp01(double v) { return std::min(1.0, std::max(0.0, v)); }

// cos/sin of multiples of 22.5 degrees with exact zeros and ones.
void direction_basis(int direction, double& c, double& s) {
  const double angle = direction * 3.14159265358979323846 / kDirections;
  c = std::cos(angle);
  s = std::sin(angle);
  if (std::fabs(c) < 1e-12) c = 0;
  if (std::fabs(s) < 1e-12) s = 0;
}

}  // namespace

double line_kernel_weight(int direction, int dx, int dy, int half_length, int half_width) {
  if (std::abs(dx) > half_length || std::abs(dy) > half_length) return 0.0;  // 'crop'
  double c, s;
  direction_basis(direction, c, s);
  const double u = dx * c + dy * s;
  const double v = -dx * s + dy * c;
  return clamp01(half_width + 1 - std::fabs(v)) * clamp01(half_length + 1 - std::fabs(u));
}

LineKernelSet build_line_kernels(int half_length, int half_width) {
  if (half_length < 1 || half_length > kMaxHalfLength || half_width < 0 || half_width > kMaxHalfWidth)
    throw std::invalid_argument("pencil: line kernel size out of range");
  LineKernelSet set;
  set.half_length = half_length;
  set.half_width = half_width;
  const int k = half_length, side = 2 * k + 1;
  std::vector<uint32_t> union_max(size_t(side) * side, 0);
  for (int d = 0; d < kDirections; ++d) {
    set.begin[d] = int(set.runs.size());
    uint32_t kernel_sum = 0;
    for (int dx = -k; dx <= k; ++dx) {
      std::vector<uint8_t> column(side);
      int lo = side, hi = -1;
      for (int dy = -k; dy <= k; ++dy) {
        const long q = std::lround(line_kernel_weight(d, dx, dy, k, half_width) * kWeightOne);
        column[dy + k] = uint8_t(q);
        if (q > 0) {
          lo = std::min(lo, dy + k);
          hi = std::max(hi, dy + k);
        }
        uint32_t& um = union_max[size_t(dy + k) * side + (dx + k)];
        um = std::max<uint32_t>(um, uint32_t(q));
        kernel_sum += uint32_t(q);
      }
      if (hi < lo) continue;
      LineRun run;
      run.dx = int16_t(dx);
      run.lo = int16_t(lo - k);
      run.len = int16_t(hi - lo + 1);
      run.offset = int32_t(set.weights.size());
      set.weights.insert(set.weights.end(), column.begin() + lo, column.begin() + hi + 1);
      set.runs.push_back(run);
    }
    set.max_kernel_sum = std::max(set.max_kernel_sum, kernel_sum);
  }
  set.begin[kDirections] = int(set.runs.size());
  for (uint32_t v : union_max) set.max_union_sum += v;
  // Stroke sums are at most 255 * max_union_sum (each source pixel adds through
  // its own class's kernel only); 255 * 255 * 129^2 < 2^32 at the largest size.
  if (double(set.max_union_sum) * double(kGradientMask) >= 4294967296.0)
    throw std::invalid_argument("pencil: line kernels too large for 32-bit sums");
  return set;
}

}  // namespace sp::pencil
