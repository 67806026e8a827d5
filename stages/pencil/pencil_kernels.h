#pragma once
// The 8 directional line kernels of Lu et al.: MATLAB's imrotate(ker, angle,
// 'bilinear', 'crop') of a (2k+1)^2 kernel whose centre row (first pass) or
// centre 2w+1 rows (second pass) are ones. Bilinear sampling of that
// separable indicator gives, at offset (dx, dy) and angle t,
//   w = clamp(w_half + 1 - |v|, 0, 1) * clamp(k + 1 - |u|, 0, 1),
//   u = dx cos t + dy sin t (along the line), v = -dx sin t + dy cos t (across),
// which we quantize to 8 bits (255 = 1) so convolutions are exact integer sums.
#include <array>
#include <cstdint>
#include <vector>

#include "stages/pencil/pencil_math.h"

namespace sp::pencil {

// One column of a kernel: offsets (dx, lo..lo+len-1), weights at `offset`.
struct LineRun {
  int16_t dx = 0;
  int16_t lo = 0;
  int16_t len = 0;
  int16_t pad = 0;
  int32_t offset = 0;
};

struct LineKernelSet {
  int half_length = 0;
  int half_width = 0;
  std::vector<LineRun> runs;                  // all directions, in direction order
  std::array<int, kDirections + 1> begin{};   // runs of direction d: [begin[d], begin[d+1])
  std::vector<uint8_t> weights;
  // Largest sum of any one kernel's weights, and of the per-offset maximum over
  // all kernels (bounds the stroke sums; see build_line_kernels).
  uint32_t max_kernel_sum = 0;
  uint32_t max_union_sum = 0;
};

// Real-valued weight of direction `direction` (angle direction * 22.5 degrees).
double line_kernel_weight(int direction, int dx, int dy, int half_length, int half_width);
LineKernelSet build_line_kernels(int half_length, int half_width);

}  // namespace sp::pencil
