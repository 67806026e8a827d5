#pragma once
// A batch: many clips through one config in one process, each clip a whole
// single run (run_transcode), `jobs` of them at a time on worker threads that
// share the config parsed once and each GPU's CUDA context; each worker keeps
// its configured stage chain for its next clip (orchestration/engine_cache.h).
// A clip long enough is cut into segments as its `run --jobs N` would be, and
// they share the workers with the other clips (orchestration/batch_segments.h).
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "orchestration/batch_segments.h"
#include "orchestration/transcode.h"

namespace sp {

struct BatchClip {
  std::string input, output;
};

struct BatchOptions {
  TranscodeOptions clip;  // what every clip runs with; input.url and output.url are each clip's
  std::vector<BatchClip> clips;
  int jobs = 1;
  // Where set, with jobs > 1: how the clips long enough are cut.
  std::optional<LongClipRules> long_clips;
  // Worker k runs its clips on GPU devices[k % size] (its device's context,
  // pools, streams, NVDEC); empty: on the calling thread's device.
  std::vector<int> devices;
  // After a failed clip no other starts; those running finish whole.
  bool fail_fast = false;
  ProgressMode progress = ProgressMode::automatic;
  std::string stats_json_path;
  const std::atomic<bool>* cancel = nullptr;
  // Called on the calling thread about every 100 ms with the batch's totals.
  std::function<void(int64_t frames, double media_seconds)> on_progress;
};

// Each input's output from the pattern, in the inputs' order.
std::vector<BatchClip> batch_clips(const std::vector<std::string>& inputs, const std::string& output_pattern);

// Before any work: no two clips write one output, no output is one of the
// inputs, and every output passes a single run's checks (existing without
// -y, missing folder, format and codec). Throws Error(usage / io_error).
void preflight_batch(const BatchOptions& options);

// Runs the clips; a failed clip is reported and the others go on (unless
// fail_fast). Ends with a line per failed input and a summary. Returns 0,
// data_error when some clip failed, interrupted after Ctrl-C or `cancel`.
int run_batch(const BatchOptions& options);

}  // namespace sp
