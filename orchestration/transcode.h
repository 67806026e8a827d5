#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "codecs/media_reader.h"
#include "codecs/media_writer.h"
#include "pipeline/bounded_queue.h"
#include "pipeline/progress.h"
#include "pipeline/run_stats.h"
#include "pipeline/stage_chain.h"

namespace sp {

class EngineCache;

struct TranscodeOptions {
  std::vector<StageSpec> stages;
  InputOptions input;
  OutputOptions output;
  std::string backend = "auto";  // auto | cuda | cpu
  int frames_in_flight = 3;
  int queue_depth = 4;
  // Live sources: queue depth 1, one frame in flight, each frame flushed when written.
  bool low_latency = false;
  // What the queues and the engine actually use: live input overrides both.
  int effective_queue_depth() const { return low_latency ? 1 : queue_depth; }
  int effective_frames_in_flight() const { return low_latency ? 1 : frames_in_flight; }
  OverflowPolicy overflow = OverflowPolicy::block;
  // A segment worker's warm-up: of the lead-in pictures the reader delivers
  // (InputOptions::window with lead_in), the last this many run through the
  // chain before the first kept frame; their output is discarded.
  int lead_in_frames = 0;
  ProgressMode progress = ProgressMode::automatic;
  std::string stats_json_path;
  // A `--jobs` worker thread: the run asks it to stop (another worker
  // failed), and sums its progress. Stopped, it finalizes what it wrote
  // and returns the interrupted code.
  const std::atomic<bool>* stop = nullptr;
  SharedProgress* progress_sink = nullptr;
  bool stop_requested() const { return stop && stop->load(); }
  // A batch worker's: the run takes its engine from here when one fits and
  // leaves it there for the next run (orchestration/engine_cache.h).
  EngineCache* engine_cache = nullptr;
  // Where the run's clock (wall_seconds and fps of its stats) starts: the
  // request's arrival for a single run of the API, so that opening the input
  // and NVDEC's session count, as they do in a `--jobs` run's; unset, when
  // run_transcode is called.
  std::optional<std::chrono::steady_clock::time_point> clock_start;
  std::optional<AutoJobsChoice> jobs_auto;  // for the stats: --jobs auto chose this single run
};

// Under --hwdec auto an input of at most this many pixels in all (120
// frames of 1080p: 2 s at 60 fps) decodes in software. NVDEC costs such an
// input more than it saves: a session takes 0.06-1 s to open (the driver
// makes one at a time) and a process that used it 0.3 s to end.
constexpr double kShortInputPixels = 120.0 * 1920 * 1080;

// Picks the backend for a request of auto|cuda|cpu. `auto` falls back to the
// CPU and says why in one line; `cuda` without a device throws (exit 69).
Choice select_backend(const std::string& request);

// Reader, processor and writer threads joined by bounded queues. Returns the
// exit code; fills `stats`. Throws sp::Error only for failures before any
// output was opened.
int run_transcode(const TranscodeOptions& options, RunStats& stats);

}  // namespace sp
