#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "orchestration/segment_plan.h"
#include "orchestration/workers.h"
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"


namespace sp {
namespace {

// run_segment's exit code; its errors are logged here, as main() would for a worker process.
int run_segment_reporting(const Manifest& m, int index, const WorkerOverrides& overrides, SegmentArrivals& arrivals) {
  try {
    announce_segment_writing(m, index, arrivals);
    return run_segment(m, index, overrides);
  } catch (const Error& e) {
    log_error("{}", e.what());
    return int(e.code());
  } catch (const std::exception& e) {
    log_error("internal error: {}", e.what());
    return int(ExitCode::internal);
  }
}

}  // namespace

WorkersOutcome run_worker_threads(const Manifest& m, const ParallelRunOptions& o, ProgressReporter& progress,
                                  SegmentArrivals& arrivals, std::atomic<bool>& stop) {
  const int segments = int(m.segments.size());
  std::deque<SharedProgress> counts(m.segments.size());  // atomics stay where they were made
  std::atomic<int> next{0}, running{0};
  std::mutex mutex;
  // The last worker's end wakes the run at once: the run's clock stops
  // when its concat is done, which waits for this (a 100 ms poll cost 50 ms
  // on average, 1.4% of a 60 s pencil run on an H200).
  std::mutex ended_mutex;
  std::condition_variable ended;
  WorkersOutcome outcome;

  auto work = [&](int device, int first) {
    try {
      use_cuda_device(device);
    } catch (const Error& e) {
      std::lock_guard lock(mutex);
      log_error("GPU {}: {}", device, e.what());
      if (!outcome.failure) outcome.failure = int(e.code());
      stop = true;
    }
    KeptDecoder decoder;  // the worker's decoder for its next segment (not NVDEC's session: codecs/kept_decoder.h)
    for (int index = first; !stop && !interrupted() && index < segments; index = next++) {
      set_thread_log_context(fmt::format("segment {}", index));
      WorkerOverrides w = o.worker;
      w.progress = ProgressMode::none;
      w.stats_json_path = m.segment_stats_path(index);
      w.stop = &stop;
      w.progress_sink = &counts[size_t(index)];
      w.kept_decoder = &decoder;
      const int code = run_segment_reporting(m, index, w, arrivals);
      set_thread_log_context("");
      std::lock_guard lock(mutex);
      outcome.exit_codes[index] = code;
      if (!o.devices.empty()) outcome.devices_used[index] = device;
      if (code == 0) {
        arrivals.finished(index);
      } else if (code != int(ExitCode::interrupted) && !outcome.failure) {
        log_error("segment {} failed (exit {}); stopping the other workers", index, code);
        outcome.failure = code;
        stop = true;
      }
    }
    {
      std::lock_guard lock(ended_mutex);
      --running;
    }
    ended.notify_all();
  };
  // A device's context is made once, not once per worker (contended, that
  // was 1-2 s each for 8 worker processes); it stays until the last one ends.
  CudaContextHold hold;
  std::vector<std::thread> workers;
  running = std::min(o.jobs, segments);
  // Worker k starts with segment k: a staggered last round's segments
  // (choose_staggered_segments) go to the GPUs in turn, and the GPUs finish
  // one after another, in the order the concat joins their segments.
  next = running.load();
  for (int k = 0; k < running; ++k)
    workers.emplace_back(work, o.devices.empty() ? current_cuda_device() : o.devices[size_t(k) % o.devices.size()], k);

  auto total = [&] {
    outcome.frames = 0, outcome.media_seconds = 0;
    for (const SharedProgress& c : counts) outcome.frames += c.frames, outcome.media_seconds += c.media_seconds;
  };
  while (running > 0) {
    {
      std::unique_lock lock(ended_mutex);
      ended.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; });
    }
    total();
    progress.update(outcome.frames, outcome.media_seconds);
  }
  for (std::thread& t : workers) t.join();
  if (stop || interrupted()) arrivals.abandon();
  total();
  progress.finish(outcome.frames, outcome.media_seconds);
  return outcome;
}

}  // namespace sp
