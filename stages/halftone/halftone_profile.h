#pragma once
// CPU phase timing of the halftone stage (`profile: true`); the CUDA
// backend's events are in halftone_gpu_profile.h.
#include <chrono>

namespace sp::halftone {

// CPU phase timing (profile: true): the backend is synchronous, so a clock
// between the phases of every iteration. With repulsion: direct the direct
// sum is booked as the near field (as on CUDA).
struct CpuProfile {
  static constexpr int kPhases = 4;
  static constexpr const char* kPhaseNames[kPhases] = {"sort", "far_field", "near_field", "move"};
  double ms[kPhases] = {};
  int iterations = 0;
  int dots = 0;
  std::chrono::steady_clock::time_point last;
  void lap(int phase);  // adds the time since the last lap to `phase`
  void print() const;   // stderr, when the stage ends
};

}  // namespace sp::halftone
