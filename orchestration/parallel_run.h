#pragma once
// `stylepipe run CONFIG -i IN -o OUT --jobs N`: a plan, N workers at a time
// (each its own decoder session, streams and encoder), and the concat, in one
// command. Workers are threads of this process, each on its GPU (the
// device's one context, shared by the workers on it), or processes on request
// (each seeing only its own GPU).
#include <optional>
#include <string>
#include <vector>

#include "orchestration/manifest.h"
#include "orchestration/segment_plan.h"
#include "pipeline/progress.h"
#include "pipeline/run_stats.h"

namespace sp {

// The ordinals a comma list names ("0,1", "0,0" for two workers on GPU 0),
// before any device is counted; nullopt for "all". Throws sp::Error(usage)
// naming an item that is not a device number.
std::optional<std::vector<int>> named_devices(const std::string& text);

// "all" or a comma list of device ordinals. Empty: the workers see what this
// process sees. Throws sp::Error(usage) naming a device that does not exist.
std::vector<int> parse_device_list(const std::string& text, int devices_present);

struct ParallelRunOptions {
  int jobs = 1;
  std::vector<int> devices;  // worker k runs on devices[k % size]; empty: no CUDA_VISIBLE_DEVICES change
  WorkerOverrides worker;  // frames in flight, queue depth, codec threads
  std::string log_level = "info";  // of worker processes
  bool worker_processes = false;  // one process per worker even on one device (a crash stays in its worker)
  ProgressMode progress = ProgressMode::automatic;
  std::string stats_json_path;
  bool keep_segments = false;  // the work directory stays after a successful concat
  double plan_seconds = 0;     // for the stats: from the request to this call (--jobs auto: counting the GPUs too)
  std::optional<AutoJobsChoice> jobs_auto;  // for the stats: what --jobs auto chose
};

// Whether the workers are threads of this process: unless worker_processes asks otherwise.
bool workers_as_threads(const ParallelRunOptions& options);
// The GPUs worker threads run on: `devices`, or the calling thread's GPU where none are named.
std::vector<int> worker_devices(const ParallelRunOptions& options);

// Runs every segment of a saved plan that is not finished yet, then joins
// them. Ctrl-C stops all workers and joins what was finished (exit 130).
// Returns the exit code.
int run_parallel(const Manifest& manifest, const ParallelRunOptions& options);

}  // namespace sp
