#pragma once
// Seams of a segment-parallel run. The dot arrangement is chaotic: no warm-up
// leads back to the one the worker before a seam has reached, so a seam would
// swap every dot at once. The worker before a seam hands over instead: from
// seam_seconds before it, it also runs the state that the next worker starts
// there (cold, on the same frames: the same dots), and shows more and more of
// that state's dots in place of its own, region by region, until at the seam
// only the next worker's are left. A smooth noise field orders the regions,
// so a handover frame swaps a share 1/n of the picture in blobs several dots
// wide, each blob a whole arrangement of one state, not a mix of two.
#include <array>
#include <cstdint>

#include "stages/halftone/halftone_math.h"

namespace sp::halftone {

// The noise lattice is this many full-ink dot spacings wide.
constexpr float kHandoverCellDots = 8.f;

// Value noise in [0, 1): hashed lattice values, smoothly interpolated.
SP_HD float handover_noise(float x, float y, uint64_t seed, float inv_cell) {
  const float u = x * inv_cell, v = y * inv_cell;
  const int i = int(floorf(u)), j = int(floorf(v));
  const float fu = u - float(i), fv = v - float(j);
  const float su = fu * fu * (3.f - 2.f * fu), sv = fv * fv * (3.f - 2.f * fv);
  const auto at = [&](int a, int b) { return unit_float(rng_bits(seed, kStreamHandover, uint32_t(a), uint32_t(b))); };
  const float top = at(i, j) + (at(i + 1, j) - at(i, j)) * su;
  const float bottom = at(i, j + 1) + (at(i + 1, j + 1) - at(i, j + 1)) * su;
  return top + (bottom - top) * sv;
}

// Where the next state's dots show: the noise below `threshold`.
struct HandoverField {
  uint64_t seed = 0;
  float inv_cell = 1.f;
  float threshold = 0.f;
};

struct OwnDots {
  HandoverField f;
  SP_HD bool operator()(float2 p) const { return handover_noise(p.x, p.y, f.seed, f.inv_cell) >= f.threshold; }
};
struct NextDots {
  HandoverField f;
  SP_HD bool operator()(float2 p) const { return handover_noise(p.x, p.y, f.seed, f.inv_cell) < f.threshold; }
};

SP_HD uint32_t render_handover_pixel(int x, int y, const float2* own, const CellGrid& own_cells, const float2* next,
                                     const CellGrid& next_cells, const RenderParams& r, const HandoverField& f) {
  return shade(disc_cover(x, y, own, own_cells, r.radius, OwnDots{f}) +
                   disc_cover(x, y, next, next_cells, r.radius, NextDots{f}),
               r);
}

// The noise's quantiles, so that a share s of the picture (not of the noise's
// range, which bunches around 0.5) shows the next state at threshold(s).
class HandoverQuantiles {
 public:
  HandoverQuantiles(uint64_t seed, float inv_cell);
  float threshold(double share) const;

 private:
  static constexpr int kSteps = 256;
  std::array<float, kSteps + 1> quantile_{};
};

}  // namespace sp::halftone
