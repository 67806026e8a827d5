#pragma once
// `stylepipe plan` and `stylepipe run --manifest`: making a manifest, and
// processing one of its segments.
#include <optional>
#include <string>

#include "orchestration/manifest.h"
#include "orchestration/transcode.h"
#include "pipeline/config.h"

namespace sp {

struct PlanRequest {
  std::string config_path;
  std::string input_path;
  ManifestOutput output;  // path as given; codec empty: the one the output's container implies
  int segments = 0;        // one of segments and segment_seconds is > 0
  double segment_seconds = 0;
  int jobs = 0;  // neither given: segments for this many workers (see make_plan)
  std::string workdir;     // empty: OUTPUT.parts beside the output
  std::string backend = "auto", hwdec = "auto", encoder = "auto";
};

// Validates the config and the output settings, reads the input's keyframes
// and cuts it. Writes nothing. Throws sp::Error: config (78), usage (64) for
// an output a concat cannot make (a pipe, images, an existing file without
// -y), no_input (66), data_error (65).
Manifest make_plan(const PlanRequest& request);
// Creates the work directory and writes WORKDIR/manifest.json into it.
void save_plan(Manifest& manifest);

// The warm-up the chain needs: what its stages declare, added up (a stage's
// state settles only once the stages before it have).
Warmup chain_warmup(const Config& config);

// The segment index of an array job: SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX
// (Kubernetes Indexed Jobs) or AWS_BATCH_JOB_ARRAY_INDEX; `source` names it.
std::optional<int> index_from_environment(std::string* source);

struct WorkerOverrides {
  std::optional<std::string> backend, hwdec, encoder;
  std::optional<int> frames_in_flight, queue_depth, threads;
  ProgressMode progress = ProgressMode::automatic;
  std::string stats_json_path;
  bool force = false;  // redo a finished segment
  const std::atomic<bool>* stop = nullptr;  // see TranscodeOptions
  SharedProgress* progress_sink = nullptr;
  KeptDecoder* kept_decoder = nullptr;  // the worker's, from its previous segment (codecs/kept_decoder.h)
};

// Processes segment `index` into its file in the work directory: written
// under the partial name, renamed once complete. A finished segment is kept
// unless force. Returns the exit code, as run_transcode.
int run_segment(const Manifest& manifest, int index, const WorkerOverrides& overrides);

}  // namespace sp
