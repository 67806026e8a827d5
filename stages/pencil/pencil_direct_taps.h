#pragma once
// The pencil kernel tests' oracle: the integer response of a line kernel by
// its own taps, one multiply-add per weight, for the plan models to match.
#include <cstdint>
#include <vector>

#include "stages/pencil/pencil_kernels.h"

namespace sp::pencil::test_oracle {

// Direct integer response of direction d at (x, y) of a value grid with rows of `stride` values.
template <class Value>
uint64_t direct_taps(const LineKernelSet& k, int d, const std::vector<Value>& v, int stride, int x, int y) {
  uint64_t sum = 0;
  for (int i = k.begin[d]; i < k.begin[d + 1]; ++i) {
    const LineRun& r = k.runs[i];
    for (int j = 0; j < r.len; ++j)
      sum += uint64_t(k.weights[r.offset + j]) * uint64_t(v[size_t(y + r.lo + j) * stride + (x + r.dx)]);
  }
  return sum;
}

}  // namespace sp::pencil::test_oracle
