#pragma once
// The two ways a `--jobs` run works through the segments of its plan: worker
// threads of this process (each on its GPU, with that device's context), or
// worker processes (each seeing only its own GPU).
#include <atomic>
#include <map>

#include "orchestration/concat.h"
#include "orchestration/parallel_run.h"
#include "pipeline/progress.h"

namespace sp {

struct WorkersOutcome {
  std::map<int, int> exit_codes;    // by segment, of those started
  std::map<int, int> devices_used;  // by segment, where a worker was put on a device
  int failure = 0;                  // the first failed segment's exit code
  int64_t frames = 0;
  double media_seconds = 0;
};

// Segments go to workers in index order, `jobs` at a time, worker k starting
// with segment k; worker k runs on devices[k % size], a later worker process
// on the GPU of the one that ended. Each finished one is announced to `arrivals`; a failure or Ctrl-C stops the others (they
// finalize what they wrote). `stop` may also be set from outside.
WorkersOutcome run_worker_threads(const Manifest& manifest, const ParallelRunOptions& options,
                                  ProgressReporter& progress, SegmentArrivals& arrivals, std::atomic<bool>& stop);
WorkersOutcome run_worker_processes(const Manifest& manifest, const ParallelRunOptions& options,
                                    ProgressReporter& progress, SegmentArrivals& arrivals,
                                    const std::atomic<bool>& stop);

}  // namespace sp
