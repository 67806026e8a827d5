// The halftone stage at the seams of a segment-parallel run (handover.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "stages/halftone/halftone.h"

namespace sp::halftone {

HandoverQuantiles::HandoverQuantiles(uint64_t seed, float inv_cell) {
  // The noise is stationary over its lattice: uniform samples of a patch of
  // 256 x 256 cells (about one a cell) give its distribution over any picture.
  constexpr int kSamples = 1 << 16;
  std::vector<float> values(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    const uint64_t bits = rng_bits(seed, kStreamHandover + 16, uint32_t(i), 0);
    const float x = unit_float(bits) * 256.f / inv_cell, y = unit_float(bits << 24) * 256.f / inv_cell;
    values[size_t(i)] = handover_noise(x, y, seed, inv_cell);
  }
  std::sort(values.begin(), values.end());
  for (int k = 0; k <= kSteps; ++k) quantile_[size_t(k)] = values[size_t(std::min(k * (kSamples / kSteps), kSamples - 1))];
  quantile_[0] = 0.f;
  quantile_[kSteps] = 1.f;
}

float HandoverQuantiles::threshold(double share) const {
  const double at = std::clamp(share, 0.0, 1.0) * kSteps;
  const int k = std::min(int(at), kSteps - 1);
  const float t = float(at - k);
  return quantile_[size_t(k)] + (quantile_[size_t(k) + 1] - quantile_[size_t(k)]) * t;
}

std::string HalftoneStage::state_lost_at_seams() const {
  if (settings_.seam_seconds > 0) return {};
  return "the dot arrangement (chaotic: no warm-up leads back to it; seam_seconds hands it over)";
}

void HalftoneStage::set_seams(const SegmentSeams& seams) {
  seams_ = seams;
  next_.reset();
  if (settings_.seam_seconds <= 0 || !seams.next_begins) return;
  // The next worker's stage: the same settings, started where it starts.
  HalftoneSettings next = settings_;
  next.points_out.clear();
  next.profile = false;
  next_ = std::make_unique<HalftoneStage>(std::move(next));
  next_->is_next_state_ = true;
}

bool HalftoneStage::needs_exact_sums() const {
  return settings_.deterministic || (settings_.seam_seconds > 0 && (is_next_state_ || seams_.begins));
}

HandoverField HalftoneStage::handover_field(float threshold) const {
  HandoverField f;
  f.seed = mix64(settings_.seed ^ 0x5EA3u);
  f.inv_cell = 1.f / (kHandoverCellDots * map_slot_px_);
  f.threshold = threshold;
  return f;
}

// The next worker starts its state at its first frame at or after
// next_begins - seam_seconds (its lead-in frames before that are not run),
// and this worker starts the copy at the same frame: the same frames from a
// cold start give the same dots. The share shown grows with the time and is
// whole from the frame one frame duration before the seam on, so the seam
// itself is a step of the next worker's state, like any frame of it.
HalftoneStage::SeamStep HalftoneStage::seam_step(double time_seconds) {
  SeamStep step;
  const double h = settings_.seam_seconds;
  const double frame_duration = last_time_ ? std::max(time_seconds - *last_time_, 0.0) : 0.0;
  last_time_ = time_seconds;
  if (h <= 0) return step;
  step.before_own_state = seams_.begins && time_seconds < *seams_.begins - h;
  step.exact = seams_.begins && time_seconds < *seams_.begins;
  if (next_ && seams_.next_begins && time_seconds >= *seams_.next_begins - h) {
    step.handing_over = true;
    const double share = (time_seconds + frame_duration - (*seams_.next_begins - h)) / h;
    step.threshold = handover_quantiles_->threshold(share > 1 - 1e-6 ? 1.0 : share);  // times carry rounding
  }
  return step;
}

}  // namespace sp::halftone
