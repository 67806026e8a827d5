#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/buffer_pool.h"
#include "pipeline/frame_engine.h"
#include "pipeline/frame_timeline.h"

namespace sp {

// Samples of one quantity (milliseconds), summarized by percentiles.
class Samples {
 public:
  void add(double v) { values_.push_back(v); }
  // Room for n samples up front: adding them then never allocates (live runs).
  void reserve(size_t n) { values_.reserve(n); }
  size_t count() const { return values_.size(); }
  double percentile(double p) const;  // nearest-rank, p in [0,100]; 0 when empty
  double median() const { return percentile(50); }
  double max() const;
  double mean() const;
  nlohmann::json summary() const;  // {count, p50, p95, p99, max, mean}

 private:
  std::vector<double> values_;
};

// A component choice and why: {"name": "libx264", "reason": "..."}.
struct Choice {
  std::string name;
  std::string reason;  // empty when it was the first choice
};

// What `--jobs auto` chose, and why (the lines it logs), for the stats.
struct AutoJobsChoice {
  int workers = 0;
  std::string reason;
  std::string devices;         // the GPUs it ran on ("" for the caller's one)
  std::string devices_reason;  // why some GPUs listed were left out; empty when none were
  nlohmann::json to_json() const;
};

struct StageStats {
  std::string name;
  Samples ms;
  std::map<std::string, Samples> counters;
};

// When this process started (its static initialization), for start-up times.
std::chrono::steady_clock::time_point process_start_time();
// Seconds from now back to process_start_time().
double seconds_since_process_start();
// Seconds from the process's exec to its static initialization (the dynamic
// loader: shared libraries, the CUDA runtime's and FFmpeg's); 10 ms steps.
double exec_to_process_start_seconds();

// One step of a run's start-up and when it was done, in seconds since
// process_start_time() (not since the previous step: steps overlap, the
// device starting beside the input opening). The stats give them since the
// process's exec.
struct StartupStep {
  std::string step;
  double seconds = 0;
};

struct RunStats {
  Choice backend, decoder, encoder;
  std::string input, output;
  int64_t frames_in = 0, frames_out = 0, frames_dropped = 0;
  int64_t frames_lead_in = 0;  // a segment's warm-up frames: processed, not written
  int64_t frames_on_cpu_at_startup = 0;  // processed on the CPU while the GPU started
  // The run's first stage chain: "built", or a batch worker's previous clip's,
  // "kept" as it was or "kept, configured" for another size.
  std::string stage_chain;
  bool decoder_kept = false;  // the decoder was a batch or segment worker's previous input's
  double wall_seconds = 0;
  double first_frame_seconds = -1;  // from the process's start to the first frame written
  std::vector<StartupStep> startup;  // in the order they were done
  int cuda_device = -1;              // the GPU (this process's ordinal) of a CUDA run
  std::string cuda_device_pci_bus_id;
  std::vector<StageStats> stages;
  Samples upload_ms, convert_in_ms, convert_out_ms, download_ms;
  Samples latency_ms;  // frame fully read -> frame fully written
  FrameTimeline timeline;  // live runs: each frame's steps, the worst frames
  PoolStats pool;
  // Lanes of the stage chain (frames whose stages run at once) and the device
  // memory the lanes past the first take.
  int stage_lanes = 1;
  uint64_t extra_lane_bytes = 0;
  EngineTraffic traffic;
  std::vector<std::string> warnings;
  std::string result = "ok";  // ok, interrupted, data error, ...
  std::optional<AutoJobsChoice> jobs_auto;  // a single run that --jobs auto chose

  void add_frame(const FrameTimings& t);
  void mark_startup(std::string step) { startup.push_back({std::move(step), seconds_since_process_start()}); }
  nlohmann::json to_json() const;
};

}  // namespace sp
