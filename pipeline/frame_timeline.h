#pragma once
// Per-frame timeline of a live run: when each frame reached each step, so a
// latency tail can be put down to the step that made it. Recording neither
// allocates nor locks: the buffers are sized once, before the first frame.
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

namespace sp {

// The moments one frame passed, on the steady clock.
struct FrameTimes {
  using Clock = std::chrono::steady_clock;
  Clock::time_point arrived;        // its first bytes were readable on the input (a pipe); else reading began
  Clock::time_point read;           // demuxed and decoded, handed on by the reader
  Clock::time_point taken;          // the processor took it
  Clock::time_point processed;      // the chain's output is ready on the host (GPU done, or CPU chain done)
  Clock::time_point write_started;  // the writer took it
  Clock::time_point written;        // the output call returned (the bytes are in the pipe or file)
};

// The steps between those moments, milliseconds.
struct FrameSteps {
  int64_t frame = 0;
  double at_seconds = 0;  // when it was written, since the first frame was read
  double arrival_to_read = 0, read_to_taken = 0, taken_to_processed = 0, processed_to_write = 0, write = 0;
  double latency = 0;  // read -> written, as latency_ms
  double arrival_to_written = 0;
};

class FrameTimeline {
 public:
  static constexpr size_t kWorst = 10;

  // Keeps the steps of the latest `capacity` frames (percentiles cover
  // those) and the worst kWorst of the whole run. 0: records nothing.
  void reserve(size_t capacity);
  bool enabled() const { return !recent_.empty(); }
  // Called by one thread (the writer), in output order.
  void record(int64_t frame, const FrameTimes& t);
  int64_t frames() const { return recorded_; }
  const FrameSteps* worst_begin() const { return worst_.data(); }
  const FrameSteps* worst_end() const { return worst_.data() + worst_count_; }

  // {frames, covered_frames, steps_ms: {step: {count, p50, p95, p99, max, mean}}, worst: [...]}
  nlohmann::json to_json() const;

 private:
  std::vector<FrameSteps> recent_;  // a ring: frame k at k % capacity
  std::array<FrameSteps, kWorst> worst_{};  // by latency, worst first
  size_t worst_count_ = 0;
  int64_t recorded_ = 0;
  FrameTimes::Clock::time_point first_read_;
};

}  // namespace sp
