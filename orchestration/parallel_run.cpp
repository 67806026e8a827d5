#include "orchestration/parallel_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "orchestration/concat.h"
#include "orchestration/json_file.h"
#include "orchestration/workers.h"
#include "pipeline/device.h"
#include "pipeline/background_removal.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace fs = std::filesystem;

namespace sp {
namespace {

using Clock = std::chrono::steady_clock;

// The concat of a `--jobs` run, joining segments while the workers make the
// later ones. Its failure stops the workers.
class StreamedConcat {
 public:
  StreamedConcat(const Manifest& m, SegmentArrivals& arrivals, std::atomic<bool>& stop)
      : thread_([&m, &arrivals, &stop, this] {
          set_thread_log_context("concat");
          try {
            result_ = concat_segments_as_they_finish(m, arrivals);
            finished_at_ = Clock::now();
          } catch (...) {
            error_ = std::current_exception();
            stop = true;
          }
        }) {}
  ~StreamedConcat() {
    if (thread_.joinable()) thread_.join();
  }
  // The joined output; nullopt if abandoned. Rethrows the concat's failure.
  std::optional<ConcatResult> finish() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return result_;
  }
  // When the joined output was complete (after finish()).
  Clock::time_point finished_at() const { return finished_at_; }

 private:
  std::optional<ConcatResult> result_;
  Clock::time_point finished_at_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

// Threads, on one GPU or several: a process per worker would pay a CUDA
// start-up each (measured: 4 GPUs in processes were slower than 1 in threads).
bool workers_as_threads(const ParallelRunOptions& o) { return !o.worker_processes; }

std::vector<int> worker_devices(const ParallelRunOptions& o) {
  return o.devices.empty() ? std::vector<int>{current_cuda_device()} : o.devices;
}

std::optional<std::vector<int>> named_devices(const std::string& text) {
  if (text == "all") return std::nullopt;
  std::vector<int> devices;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    // Digits only, and few enough for an int: "+1", " 1" and "1e3" are refused.
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw Error(ExitCode::usage, fmt::format("--devices: '{}' is not a device number (give e.g. 0,1 or all)", item));
    devices.push_back(std::stoi(item));
  }
  if (!text.empty() && text.back() == ',')
    throw Error(ExitCode::usage, "--devices: '' is not a device number (give e.g. 0,1 or all)");
  return devices;
}

std::vector<int> parse_device_list(const std::string& text, int devices_present) {
  std::vector<int> devices;
  if (text.empty()) return devices;
  const std::optional<std::vector<int>> named = named_devices(text);
  if (!named) {
    if (devices_present == 0) throw Error(ExitCode::unavailable, "--devices all: no CUDA device is present");
    for (int d = 0; d < devices_present; ++d) devices.push_back(d);
    return devices;
  }
  for (const int d : *named) {
    if (d >= devices_present)
      throw Error(ExitCode::usage,
                  devices_present == 0 ? fmt::format("--devices: GPU {} does not exist: no CUDA device is present", d)
                                       : fmt::format("--devices: GPU {} does not exist (this machine has {}: 0..{})", d,
                                                     devices_present, devices_present - 1));
    devices.push_back(int(d));
  }
  return devices;
}

int run_parallel(const Manifest& m, const ParallelRunOptions& o) {
  const auto t0 = Clock::now();
  ProgressReporter progress(o.progress, m.input_duration_seconds, -1);
  WorkersOutcome workers;
  std::optional<ConcatResult> joined;
  double workers_seconds = 0;
  std::optional<Clock::time_point> joined_at;
  {
    // The concat joins each segment as its worker writes it, in either mode:
    // the run ends a moment after its last worker.
    SegmentArrivals arrivals(m.segments.size());
    std::atomic<bool> stop{false};
    StreamedConcat concat(m, arrivals, stop);
    workers = workers_as_threads(o) ? run_worker_threads(m, o, progress, arrivals, stop)
                                    : run_worker_processes(m, o, progress, arrivals, stop);
    workers_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    // The GPUs' contexts go while the last segments are joined, not at exit
    // (0.1-0.25 s a GPU; a no-op in a library's host: pipeline/device.h).
    // The run's clock stops when the output is complete, as a single run's
    // does before its process lets its GPU go; what the release takes after
    // that is gpu_release_seconds.
    std::future<void> released;
    if (workers_as_threads(o))
      released = std::async(std::launch::async, [devices = worker_devices(o)] {
        try {
          release_cuda_contexts(devices);
        } catch (const std::exception& e) {
          log_warning("releasing the GPUs: {}", e.what());
        }
      });
    try {
      joined = concat.finish();
      if (joined) joined_at = concat.finished_at();
    } catch (const Error&) {
      // Ctrl-C ends the concat too; what was finished is joined below.
      if (!interrupted()) throw;
    }
  }
  const double release_seconds = joined_at ? std::chrono::duration<double>(Clock::now() - *joined_at).count() : 0;
  if (workers.failure) {
    log_error("the finished segments stay in {}; the same command again redoes only the others", m.workdir);
    return workers.failure;
  }

  const bool was_interrupted = interrupted();
  acknowledge_interrupt();  // the workers have stopped; joining what they finished must not stop too
  if (!joined) {
    ConcatOptions concat;
    concat.finished_prefix_only = was_interrupted;
    joined = concat_segments(m, concat);
  }
  const double wall = o.plan_seconds + std::chrono::duration<double>(joined_at.value_or(Clock::now()) - t0).count();
  // With worker threads most of the concat ran beside them: this is what was
  // left after (none where it ended before the last worker's thread did).
  const double concat_seconds = std::max(0.0, wall - o.plan_seconds - workers_seconds);

  if (!o.stats_json_path.empty()) {
    nlohmann::json segments = nlohmann::json::array();
    for (size_t i = 0; i < m.segments.size(); ++i) {
      nlohmann::json s = read_json_file(m.segment_stats_path(int(i)));
      const auto code = workers.exit_codes.find(int(i));
      nlohmann::json entry = {{"index", i}, {"exit_code", code == workers.exit_codes.end() ? 0 : code->second}, {"stats", s}};
      const auto device = workers.devices_used.find(int(i));
      if (device != workers.devices_used.end() && device->second >= 0) entry["device"] = device->second;
      segments.push_back(entry);
    }
    nlohmann::json stats = {{"input", m.input_path},
                                  {"output", joined->output},
                                  {"jobs", o.jobs},
                                  {"workers", workers_as_threads(o) ? "threads" : "processes"},
                                  {"devices", o.devices},
                                  {"frames", {{"out", joined->frames}}},
                                  {"wall_seconds", wall},
                                  {"phases_seconds",
                                   {{"plan", o.plan_seconds}, {"workers", workers_seconds}, {"concat", concat_seconds}}},
                                  {"fps", wall > 0 ? joined->frames / wall : 0},
                                  {"gpu_release_seconds", release_seconds},
                                  {"result", was_interrupted ? "interrupted" : "ok"},
                                  {"segments", segments}};
    if (o.jobs_auto) stats["jobs_auto"] = o.jobs_auto->to_json();
    std::ofstream out(o.stats_json_path);
    out << stats.dump(2) << "\n";
    if (!out) log_error("{}: cannot write stats", o.stats_json_path);
  }
  if (was_interrupted) {
    log_warning("interrupted: {} frames of the finished segments were joined into {}", joined->frames, joined->output);
    return int(ExitCode::interrupted);
  }
  log_info("{} segments, {} frames in {:.2f} s ({:.1f} fps; plan {:.2f} s, workers {:.2f} s, concat after them {:.2f} s) -> {}",
           joined->segments, joined->frames, wall, joined->frames / wall, o.plan_seconds, workers_seconds,
           concat_seconds, joined->output);
  if (!o.keep_segments) {
    remove_in_background(m.workdir);
  }
  return 0;
}

}  // namespace sp
