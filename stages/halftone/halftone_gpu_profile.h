#pragma once
// CUDA phase timing of the halftone stage (`profile: true`; CUDA builds only).
#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"
#include "stages/halftone/halftone_math.h"

namespace sp::halftone {

// Phase timing (profile: true): events between the phases of a frame; read
// when they have completed (a later frame, or the end), never waited for.
enum Mark { kStart, kSetup, kAttraction, kSort, kSpread, kFft, kInterpolate, kNear, kMove, kIterated, kEnd, kMarks };
const char* const kMarkNames[kMarks] = {"",       "setup",       "attraction", "sort", "spread", "fft",
                                        "interpolate", "near_field", "move",  "",     "render"};

struct Profile {
  static constexpr int kSets = 8;  // frames the host may run ahead of the device
  cudaEvent_t event[kSets][kMarks] = {};
  bool pending[kSets] = {};
  int iterations[kSets] = {};   // known on the host (cold frames), or -1: read from copied[]
  int* copied = nullptr;          // pinned, kSets: warm frames' iteration counts, copied before kEnd
  int current = 0;  // set being recorded this frame
  int frames = 0;
  double ms[kMarks] = {};
  double iteration_ms = 0;  // mean time of one whole iteration
  int dots = 0;

  bool on() const { return event[0][0] != nullptr; }
  cudaEvent_t at(Mark m) const { return event[current][m]; }
  void record(Mark m, cudaStream_t s) const {
    if (on()) SP_CUDA_CHECK(cudaEventRecord(event[current][m], s));
  }
  // Adds every completed frame's timings; never waits.
  void collect(const FrameNumbers& numbers) {
    for (int k = 0; k < kSets; ++k) {
      if (!pending[k] || cudaEventQuery(event[k][kEnd]) != cudaSuccess) continue;
      float t = 0;
      for (int i = 1; i < kMarks; ++i) {
        SP_CUDA_CHECK(cudaEventElapsedTime(&t, event[k][i - 1], event[k][i]));
        ms[i] += t;
      }
      SP_CUDA_CHECK(cudaEventElapsedTime(&t, event[k][kAttraction], event[k][kIterated]));
      const int its = iterations[k] >= 0 ? iterations[k] : copied[k];
      iteration_ms += its > 0 ? t / its : 0.0;
      dots = numbers.count;
      ++frames;
      pending[k] = false;
    }
  }
  void begin_frame() { current = (current + 1) % kSets; pending[current] = false; }
  // A warm frame's count is known on the device only: copied ahead of kEnd.
  void copy_iterations(const int* device_count, cudaStream_t s) {
    if (on()) SP_CUDA_CHECK(cudaMemcpyAsync(copied + current, device_count, sizeof(int), cudaMemcpyDeviceToHost, s));
  }
  void end_frame(int its) {
    pending[current] = on();
    iterations[current] = its;
  }
};

}  // namespace sp::halftone
