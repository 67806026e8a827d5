#include "orchestration/batch.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "orchestration/auto_jobs.h"
#include "orchestration/engine_cache.h"
#include "orchestration/output_pattern.h"
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"
#include "pipeline/parallel.h"

namespace sp {
namespace {

// One spelling per file: ./a and a, or a path through a symbolic link to
// its folder, are the same output.
std::string path_key(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
  return (ec ? std::filesystem::path(path) : canonical).lexically_normal().string();
}

// A hard link is the same file under another name: device and inode say so.
std::optional<std::pair<dev_t, ino_t>> file_identity(const std::string& path) {
  struct stat s {};
  if (stat(path.c_str(), &s) != 0) return std::nullopt;
  return std::make_pair(s.st_dev, s.st_ino);
}

void refuse_shared_outputs(const std::vector<BatchClip>& clips) {
  std::map<std::string, const BatchClip*> writer_of;
  for (const BatchClip& clip : clips) {
    const auto [it, fresh] = writer_of.emplace(path_key(clip.output), &clip);
    if (!fresh)
      throw Error(ExitCode::usage, fmt::format("-o: {} and {} would both be written to {}; put {{stem}}, {{name}} or "
                                               "{{index}} in the pattern",
                                               it->second->input, clip.input, clip.output));
  }
}

void refuse_outputs_that_are_inputs(const std::vector<BatchClip>& clips) {
  std::map<std::string, const BatchClip*> by_path;
  std::map<std::pair<dev_t, ino_t>, const BatchClip*> by_identity;
  for (const BatchClip& clip : clips) {
    by_path.emplace(path_key(clip.input), &clip);
    if (const auto id = file_identity(clip.input)) by_identity.emplace(*id, &clip);
  }
  for (const BatchClip& clip : clips) {
    const BatchClip* source = nullptr;
    if (const auto it = by_path.find(path_key(clip.output)); it != by_path.end()) source = it->second;
    else if (const auto id = file_identity(clip.output)) {
      if (const auto same = by_identity.find(*id); same != by_identity.end()) source = same->second;
    }
    if (source)
      throw Error(ExitCode::usage, fmt::format("-o: the output of {} would be {}, which is the input {}; write elsewhere",
                                               clip.input, clip.output, source->input));
  }
}

// Opening NVDEC for a clip takes 0.25 s with 4 workers on an H100 and about
// 1 s with 16, even for a kept decoder (FFmpeg's H.264 decoder makes its
// NVDEC session again after a flush). A batch of 200 clips of 2 s at 720p30
// ran at 608 fps decoding on NVDEC and 1,161 fps decoding in software, 16
// workers (docs/perf.md).
constexpr const char* kShortClipReason =
    "a short clip in a batch (up to 120 frames of 1080p): opening NVDEC per clip costs more than decoding it on the "
    "CPU (--hwdec nvdec to decode on the GPU anyway)";

struct ClipOutcome {
  bool started = false;
  double started_seconds = 0;  // after the batch started
  int device = -1;  // the GPU its worker ran on, where the batch spread over GPUs
  int code = 0;
  std::string error;
  int64_t frames = 0;
  double seconds = 0;
  std::optional<nlohmann::json> stats;
  int segments = 0;  // where the clip was cut: its plan's
};

// The failure's words without the input's name in front: the report names it.
std::string without_input_prefix(std::string error, const std::string& input) {
  if (const std::string prefix = input + ": "; error.rfind(prefix, 0) == 0) error.erase(0, prefix.size());
  return error;
}

ClipOutcome run_clip(const BatchOptions& o, size_t index, SharedProgress& progress, EngineCache& engines) {
  const BatchClip& clip = o.clips[index];
  TranscodeOptions t = o.clip;
  t.input.url = clip.input;
  t.output.url = clip.output;
  t.progress = ProgressMode::none;  // the batch reports for all clips
  t.stats_json_path.clear();
  t.stop = o.cancel;
  t.progress_sink = &progress;
  t.engine_cache = &engines;
  t.input.kept_decoder = &engines.decoder();
  if (o.clips.size() > 1) {
    t.input.software_decode_up_to_pixels = kShortInputPixels;
    t.input.short_input_reason = kShortClipReason;
  }
  ClipOutcome outcome;
  outcome.started = true;
  const auto start = std::chrono::steady_clock::now();
  RunStats stats;
  try {
    outcome.code = run_transcode(t, stats);
    if (outcome.code != 0) outcome.error = stats.result;
    outcome.stats = stats.to_json();
  } catch (const Error& e) {
    log_error("{}", e.what());
    outcome.code = int(e.code());
    outcome.error = e.what();
  } catch (const std::exception& e) {
    log_error("internal error: {}", e.what());
    outcome.code = int(ExitCode::internal);
    outcome.error = std::string("internal error: ") + e.what();
  }
  outcome.error = without_input_prefix(outcome.error, clip.input);
  outcome.frames = stats.frames_out;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

bool is_failure(const ClipOutcome& c) { return c.started && c.code != 0 && c.code != int(ExitCode::interrupted); }

nlohmann::json batch_json(const BatchOptions& o, const std::vector<ClipOutcome>& outcomes, double seconds, int code) {
  nlohmann::json inputs = nlohmann::json::array();
  int64_t frames = 0;
  int done = 0, failed = 0, interrupted_clips = 0, not_started = 0;
  for (size_t k = 0; k < outcomes.size(); ++k) {
    const ClipOutcome& c = outcomes[k];
    nlohmann::json entry = {{"index", k}, {"input", o.clips[k].input}, {"output", o.clips[k].output}};
    if (!c.started) {
      entry["exit_code"] = nullptr;
      entry["error"] = "not started";
      ++not_started;
    } else {
      const double fps = c.seconds > 0 ? double(c.frames) / c.seconds : 0.0;
      entry.update({{"exit_code", c.code}, {"error", c.error}, {"frames", c.frames}, {"seconds", c.seconds},
                    {"fps", fps}});
      if (c.segments == 0) entry["started_seconds"] = c.started_seconds;
      if (c.device >= 0) entry["device"] = c.device;
      if (c.segments > 0) entry["segments"] = c.segments;
      if (c.stats) entry["stats"] = *c.stats;
      frames += c.frames;
      done += c.code == 0;
      failed += is_failure(c);
      interrupted_clips += c.code == int(ExitCode::interrupted);
    }
    inputs.push_back(std::move(entry));
  }
  const nlohmann::json totals = {{"inputs", outcomes.size()}, {"done", done},        {"failed", failed},
                                 {"interrupted", interrupted_clips}, {"not_started", not_started},
                                 {"frames", frames},  {"seconds", seconds},
                                 {"fps", seconds > 0 ? double(frames) / seconds : 0.0}};
  return {{"batch", true}, {"jobs", o.jobs}, {"exit_code", code}, {"inputs", inputs}, {"totals", totals}};
}

// "stylepipe: INPUT: ERROR" per failed input and the summary: shown unless
// the log is quiet, like errors, because they are the batch's result.
void report(const BatchOptions& o, const std::vector<ClipOutcome>& outcomes) {
  int done = 0, failed = 0, not_started = 0;
  std::vector<std::string> lines;
  for (size_t k = 0; k < outcomes.size(); ++k) {
    const ClipOutcome& c = outcomes[k];
    done += c.started && c.code == 0;
    not_started += !c.started;
    if (is_failure(c)) {
      ++failed;
      lines.push_back(fmt::format("stylepipe: {}: {}", o.clips[k].input, c.error));
    }
  }
  std::string summary = fmt::format("{} of {} inputs done, {} failed", done, outcomes.size(), failed);
  if (const int stopped = int(outcomes.size()) - done - failed - not_started; stopped > 0)
    summary += fmt::format(", {} interrupted", stopped);
  if (not_started > 0) summary += fmt::format(", {} not started", not_started);
  if (failed == 0) {
    log_info("{}", summary);
    return;
  }
  if (log_level() < LogLevel::error) return;
  lines.push_back("stylepipe: " + summary);
  clear_status_line();
  for (const std::string& line : lines) std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

// What the workers take, in order: a clip (whole, or cut once it turns out
// long) or a segment of a cut one. A worker looking at a clip may add its
// segments, so until it has, an empty queue is not the end.
struct Task {
  size_t clip = 0;
  int segment = -1;  // -1: the clip
};

class TaskQueue {
  static bool is_segment(const Task& t) { return t.segment >= 0; }

 public:
  // The clips in the order they are to start.
  TaskQueue(const std::vector<size_t>& clips, bool clips_may_be_cut) : may_cut_(clips_may_be_cut) {
    for (size_t k : clips) tasks_.push_back({k});
  }
  // The next task; none once there is none left or `cancelled` says so.
  // After `no_new_clips` only segments of clips already started come: those
  // clips finish whole. A clip taken where clips may be cut must be answered
  // by looked_at.
  std::optional<Task> next(const std::function<bool()>& no_new_clips, const std::function<bool()>& cancelled) {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (cancelled()) return std::nullopt;
      const auto it = no_new_clips() ? std::find_if(tasks_.begin(), tasks_.end(), is_segment) : tasks_.begin();
      if (it != tasks_.end()) {
        const Task task = *it;
        tasks_.erase(it);
        looking_ += task.segment < 0 && may_cut_;
        return task;
      }
      if (looking_ == 0) return std::nullopt;
      more_.wait_for(lock, std::chrono::milliseconds(100));  // the flags are polled
    }
  }
  // `clip` was cut into `segments` (0: it was not): segments 1.. come next,
  // segment 0 is the caller's.
  void looked_at(size_t clip, int segments) {
    {
      std::lock_guard lock(mutex_);
      for (int i = segments - 1; i >= 1; --i) tasks_.push_front({clip, i});
      --looking_;
    }
    more_.notify_all();
  }

 private:
  const bool may_cut_;
  std::mutex mutex_;
  std::condition_variable more_;
  std::deque<Task> tasks_;
  int looking_ = 0;
};

std::vector<size_t> in_list_order(size_t count) {
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), size_t(0));
  return order;
}

// With several workers the longest clips start first, so that none starts
// last and keeps one worker busy while the others wait: each clip's length
// (into `lengths`) from its container's header, its streams where the header
// has none. A clip that is not a regular file (a FIFO would give its data to
// the probe) or cannot be read has none: it starts last, and its own run
// reports what is wrong.
std::vector<size_t> longest_first(const std::vector<BatchClip>& clips, std::vector<InputLength>& lengths) {
  parallel_for(int(clips.size()), [&](int begin, int end) {
    for (size_t k = size_t(begin); k < size_t(end); ++k) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(clips[k].input, ec)) continue;
      try {
        lengths[k] = probe_input_length(clips[k].input);
      } catch (const std::exception&) {
      }
    }
  });
  std::vector<size_t> order = in_list_order(clips.size());
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a].seconds > lengths[b].seconds; });
  return order;
}

// After the workers: each cut clip's joined output, or its failure, is its
// outcome. Stopped, each joins what was finished from its start.
void finish_segmented_clips(const BatchOptions& o, std::vector<std::unique_ptr<SegmentedClip>>& segmented,
                            std::vector<ClipOutcome>& outcomes, bool stopped) {
  for (size_t k = 0; k < segmented.size(); ++k) {
    if (!segmented[k]) continue;
    if (interrupted()) acknowledge_interrupt();  // the workers have stopped; the joins must not stop too
    SegmentedOutcome s = segmented[k]->finish(stopped);
    ClipOutcome& c = outcomes[k];
    c.started = s.started;
    c.code = s.code;
    c.error = without_input_prefix(s.error, o.clips[k].input);
    c.frames = s.frames;
    c.seconds = s.seconds;
    c.stats = std::move(s.stats);
    c.segments = segmented[k]->segments();
    if (c.code == 0)
      log_info("{} -> {}: {} frames in {} segments, {:.2f} s", o.clips[k].input, o.clips[k].output, c.frames,
               c.segments, c.seconds);
  }
}

}  // namespace

std::vector<BatchClip> batch_clips(const std::vector<std::string>& inputs, const std::string& output_pattern) {
  check_output_pattern(output_pattern);
  if (inputs.size() > 1 && !is_output_pattern(output_pattern))
    throw Error(ExitCode::usage, fmt::format("-o {}: {} inputs need an output pattern with {{stem}}, {{name}}, {{ext}} "
                                             "or {{index}} (e.g. 'out/{{stem}}_styled.mp4')",
                                             output_pattern, inputs.size()));
  std::vector<BatchClip> clips;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k] == "-") throw Error(ExitCode::usage, "-i -: stdin is one input; a batch reads files");
    clips.push_back({inputs[k], fill_output_pattern(output_pattern, inputs[k], k)});
  }
  return clips;
}

void preflight_batch(const BatchOptions& o) {
  refuse_shared_outputs(o.clips);
  refuse_outputs_that_are_inputs(o.clips);
  for (const BatchClip& clip : o.clips) {
    OutputOptions output = o.clip.output;
    output.url = clip.output;
    MediaWriter::preflight(output);
  }
}

int run_batch(const BatchOptions& o) {
  preflight_batch(o);
  const size_t count = o.clips.size();
  std::vector<ClipOutcome> outcomes(count);
  std::deque<SharedProgress> counts(count);  // atomics stay where they were made
  std::vector<std::unique_ptr<SegmentedClip>> segmented(count);  // the clips that were cut
  std::atomic<int> running{0};
  std::atomic<bool> stop_starting{false};
  std::mutex mutex;  // of the outcomes, the segmented clips and the tasks
  const auto cancelled = [&] { return interrupted() || (o.cancel && o.cancel->load()); };
  const bool cut_long_clips = o.long_clips && o.jobs > 1;
  const auto start = std::chrono::steady_clock::now();
  std::vector<InputLength> lengths(count);
  TaskQueue tasks(o.jobs > 1 ? longest_first(o.clips, lengths) : in_list_order(count), cut_long_clips);
  const auto no_new_clips = [&] { return stop_starting.load(); };

  // Under `mutex`: a clip failed; with --fail-fast no other clip starts.
  auto clip_failed = [&](size_t k) {
    if (!o.fail_fast || stop_starting) return;
    log_error("{} failed; --fail-fast: no other input starts", o.clips[k].input);
    stop_starting = true;
  };
  // A clip long enough becomes its plan's segments: the first on this
  // worker, the others first in line for any worker. One that cannot be
  // planned (an output a concat cannot make, keyframes that cannot be read)
  // runs whole, as its single run without --jobs would.
  auto cut_if_long = [&](size_t k) {
    std::unique_ptr<SegmentedClip> cut;
    try {
      const int jobs = jobs_to_cut(*o.long_clips, lengths[k], o.jobs);
      if (jobs >= 2 && worth_cutting(*o.long_clips, lengths[k]))
        cut = std::make_unique<SegmentedClip>(*o.long_clips, o.clips[k].input, o.clips[k].output, jobs);
    } catch (const std::exception& e) {  // (any: the other workers wait for looked_at)
      log_warning("{}: runs whole, not cut into segments: {}", o.clips[k].input, e.what());
    }
    std::lock_guard lock(mutex);
    tasks.looked_at(k, cut ? cut->segments() : 0);
    segmented[k] = std::move(cut);
    return segmented[k].get();
  };
  auto run_segment = [&](size_t k, int index, int worker, int device) {
    SegmentedClip* clip = nullptr;
    {
      std::lock_guard lock(mutex);
      clip = segmented[k].get();
    }
    if (clip->stopped()) return;
    set_thread_log_context(fmt::format("clip {}/{} segment {}", k + 1, count, index));
    const int code = clip->run_segment(index, worker, device);
    set_thread_log_context("");
    std::lock_guard lock(mutex);
    if (code != 0 && code != int(ExitCode::interrupted)) clip_failed(k);
  };
  auto work = [&](int worker, int device) {
    try {
      if (device >= 0) use_cuda_device(device);
    } catch (const Error& e) {
      log_error("GPU {}: {}", device, e.what());
      stop_starting = true;
      --running;
      return;
    }
    EngineCache engines;  // the worker's stage chains, configured once for all its clips of a size
    while (const std::optional<Task> task = tasks.next(no_new_clips, cancelled)) {
      const size_t k = task->clip;
      if (task->segment >= 0) {
        run_segment(k, task->segment, worker, device);
        continue;
      }
      if (cut_long_clips) {
        set_thread_log_context(fmt::format("clip {}/{}", k + 1, count));
        const bool cut = cut_if_long(k) != nullptr;
        set_thread_log_context("");
        if (cut) {
          run_segment(k, 0, worker, device);
          continue;
        }
      }
      set_thread_log_context(fmt::format("clip {}/{}", k + 1, count));
      const double started = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ClipOutcome outcome = run_clip(o, k, counts[k], engines);
      outcome.device = device;
      outcome.started_seconds = started;
      if (outcome.code == 0)
        log_info("{} -> {}: {} frames in {:.2f} s", o.clips[k].input, o.clips[k].output, outcome.frames,
                 outcome.seconds);
      set_thread_log_context("");
      std::lock_guard lock(mutex);
      if (is_failure(outcome)) clip_failed(k);
      outcomes[k] = std::move(outcome);
    }
    --running;
  };
  // The clips share each device's context; it stays up between them.
  CudaContextHold hold;
  ProgressReporter progress(o.progress, 0, 0);
  // Fewer clips than jobs: the workers left over may still take segments.
  const int workers = cut_long_clips ? o.jobs : int(std::min<size_t>(size_t(std::max(1, o.jobs)), count));
  running = workers;
  std::vector<std::thread> threads;
  for (int k = 0; k < workers; ++k)
    threads.emplace_back(work, k, o.devices.empty() ? -1 : o.devices[size_t(k) % o.devices.size()]);
  int64_t frames = 0;
  double media_seconds = 0;
  auto total = [&] {
    frames = 0, media_seconds = 0;
    for (const SharedProgress& c : counts) frames += c.frames, media_seconds += c.media_seconds;
    std::lock_guard lock(mutex);
    for (const auto& clip : segmented)
      if (clip) clip->add_progress(frames, media_seconds);
  };
  while (running > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (cancelled()) {  // a segment stops on its clip's flag (a whole clip on `cancel`)
      std::lock_guard lock(mutex);
      for (const auto& clip : segmented)
        if (clip) clip->stop();
    }
    total();
    progress.update(frames, media_seconds);
    if (o.on_progress) o.on_progress(frames, media_seconds);
  }
  for (std::thread& t : threads) t.join();
  bool stopped = cancelled();
  finish_segmented_clips(o, segmented, outcomes, stopped);
  total();
  progress.finish(frames, media_seconds);
  if (o.on_progress) o.on_progress(frames, media_seconds);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  bool failed = false;
  for (const ClipOutcome& c : outcomes) failed |= is_failure(c), stopped |= c.code == int(ExitCode::interrupted);
  int code = stopped ? int(ExitCode::interrupted) : failed ? int(ExitCode::data_error) : 0;
  report(o, outcomes);
  if (!o.stats_json_path.empty()) {
    std::ofstream out(o.stats_json_path);
    out << batch_json(o, outcomes, seconds, code).dump(2) << "\n";
    if (!out) {
      log_error("{}: cannot write stats", o.stats_json_path);
      if (code == 0) code = int(ExitCode::io_error);
    }
  }
  return code;
}

}  // namespace sp
