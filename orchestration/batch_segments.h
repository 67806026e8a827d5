#pragma once
// A long clip of a batch, cut as its own `stylepipe run CLIP --jobs N` cuts
// it: the same plan (make_plan: where, and the warm-up frames its temporal
// stages get before each segment), its segments run by the batch's workers
// beside the whole clips, and joined as they finish into the clip's output
// under a temporary name, renamed once complete.
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "orchestration/auto_jobs.h"
#include "orchestration/concat.h"
#include "orchestration/segment_plan.h"

namespace sp {

// What a `run --jobs N` of one clip would plan and give its workers.
struct LongClipRules {
  PlanRequest plan;        // its input and output are each clip's
  WorkerOverrides worker;  // threads, backend, frames in flight, ...
  Warmup warmup;           // the chain's, before each segment: it takes longer segments
  // --jobs auto: the host, so that each clip is cut as its own `run CLIP
  // --jobs auto` would cut it (a batch's auto runs more clips at a time than
  // a run has workers, and a 30 s clip cut for 32 would pay 32 segments'
  // warm-up and start). Unset: as `run CLIP --jobs N`, N the batch's.
  std::optional<AutoJobsHost> auto_host;
  // What the warm-up weighs on a clip (AutoJobsHost::warmup_weight), as its
  // own run would weigh it; unset: a whole frame.
  std::function<double(const InputLength&)> warmup_weight;
};

// The workers a clip of this length is cut for: the batch's `jobs`, or with
// `rules.auto_host` what `--jobs auto` gives the clip alone (at most `jobs`).
int jobs_to_cut(const LongClipRules& rules, const InputLength& length, int jobs);

// Whether a clip of this length (probe_input_length) is long enough to cut:
// --jobs auto's length rule would give it two workers or more. A clip that
// could not be probed (no length) is not: it runs whole and reports its error
// as its single run would.
bool worth_cutting(const LongClipRules& rules, const InputLength& length);

struct SegmentedOutcome {
  bool started = false;
  int code = 0;
  std::string error;
  int64_t frames = 0;
  double seconds = 0;  // from its plan to its output's end
  nlohmann::json stats;  // {"workdir", "segments": [{index, exit_code, worker, device, stats}]}
};

class SegmentedClip {
 public:
  // Plans the clip (throws sp::Error as make_plan does) and starts its concat.
  SegmentedClip(const LongClipRules& rules, const std::string& input, const std::string& output, int jobs);
  ~SegmentedClip();
  SegmentedClip(const SegmentedClip&) = delete;
  SegmentedClip& operator=(const SegmentedClip&) = delete;

  int segments() const { return int(manifest_.segments.size()); }
  const Manifest& manifest() const { return manifest_; }
  // Runs segment `index` on the calling batch worker (its number, and its
  // device or -1); returns its exit code. After a failed segment or stop(),
  // the running ones finalize what they wrote and the others do not start.
  int run_segment(int index, int worker, int device);
  bool stopped() const { return stop_; }
  void stop() { stop_ = true; }
  void add_progress(int64_t& frames, double& media_seconds) const;
  // Once none of its segments runs any more: the joined output, or the
  // failure; `interrupted`: the finished segments from the start are joined,
  // as a --jobs run does after Ctrl-C.
  SegmentedOutcome finish(bool interrupted);

 private:
  using Clock = std::chrono::steady_clock;
  const Clock::time_point created_ = Clock::now();
  Clock::time_point joined_at_;
  LongClipRules rules_;
  Manifest manifest_;
  std::atomic<bool> stop_{false};
  std::deque<SharedProgress> progress_;  // per segment; atomics stay where they were made
  mutable std::mutex mutex_;
  std::map<int, int> exit_codes_, workers_, devices_;
  int failure_ = 0;
  std::string failure_error_;
  int finished_ = 0;
  SegmentArrivals arrivals_;
  std::optional<ConcatResult> joined_;
  std::exception_ptr concat_error_;
  std::thread concat_;
};

}  // namespace sp
