#include "orchestration/batch_segments.h"

#include <algorithm>
#include <filesystem>

#include "orchestration/auto_jobs.h"
#include "orchestration/json_file.h"
#include "pipeline/background_removal.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace fs = std::filesystem;

namespace sp {

namespace {

// Asked only of a clip long enough for two workers: for a shorter one no
// weight changes the cut, and asking costs the chain's stages made and the
// encoder planned, for each clip of a folder of short ones.
double warmup_weight_of(const LongClipRules& rules, const InputLength& length) {
  if (!rules.warmup_weight || workers_for_length(length.seconds, 0) < 2) return 1.0;
  return std::clamp(rules.warmup_weight(length), 0.0, 1.0);
}

}  // namespace

bool worth_cutting(const LongClipRules& rules, const InputLength& length) {
  const double warmup = warmup_seconds_at(rules.warmup, length.frame_rate) * warmup_weight_of(rules, length);
  return length.seconds > 0 && workers_for_length(length.seconds, warmup) >= 2;
}

int jobs_to_cut(const LongClipRules& rules, const InputLength& length, int jobs) {
  if (!rules.auto_host) return jobs;
  AutoJobsHost host = *rules.auto_host;
  host.clips = 0;
  host.input_seconds = length.seconds;
  host.warmup_seconds = warmup_seconds_at(rules.warmup, length.frame_rate);
  host.warmup_weight = warmup_weight_of(rules, length);
  return std::min(jobs, choose_jobs(host).jobs);
}

SegmentedClip::SegmentedClip(const LongClipRules& rules, const std::string& input, const std::string& output, int jobs)
    : rules_(rules), manifest_([&] {
        PlanRequest r = rules.plan;
        r.input_path = input;
        r.output.path = output;
        r.jobs = jobs;
        Manifest m = make_plan(r);
        save_plan(m);
        return m;
      }()),
      progress_(manifest_.segments.size()),
      arrivals_(manifest_.segments.size()) {
  log_info("{}: {} segments ({} warm-up frames each) in {}, as `run --jobs {}` cuts it", input,
           manifest_.segments.size(), manifest_.warmup_frames, manifest_.workdir, jobs);
  concat_ = std::thread([this, context = thread_log_context()] {
    set_thread_log_context(context.empty() ? "concat" : context + " concat");
    try {
      joined_ = concat_segments_as_they_finish(manifest_, arrivals_);
    } catch (...) {
      concat_error_ = std::current_exception();
      stop_ = true;  // its segments would be joined by nobody
    }
    joined_at_ = Clock::now();
  });
}

SegmentedClip::~SegmentedClip() {
  if (!concat_.joinable()) return;
  stop_ = true;
  arrivals_.abandon();
  concat_.join();
}

int SegmentedClip::run_segment(int index, int worker, int device) {
  WorkerOverrides w = rules_.worker;
  w.progress = ProgressMode::none;
  w.stats_json_path = manifest_.segment_stats_path(index);
  w.stop = &stop_;
  w.progress_sink = &progress_[size_t(index)];
  int code = 0;
  std::string error;
  try {
    announce_segment_writing(manifest_, index, arrivals_);
    code = sp::run_segment(manifest_, index, w);
  } catch (const Error& e) {
    log_error("{}", e.what());
    code = int(e.code());
    error = e.what();
  } catch (const std::exception& e) {
    log_error("internal error: {}", e.what());
    code = int(ExitCode::internal);
    error = std::string("internal error: ") + e.what();
  }
  if (code != 0 && error.empty()) {
    const nlohmann::json stats = read_json_file(w.stats_json_path);
    if (stats.is_object() && stats.contains("result")) error = stats["result"].get<std::string>();
  }
  std::lock_guard lock(mutex_);
  exit_codes_[index] = code;
  workers_[index] = worker;
  if (device >= 0) devices_[index] = device;
  if (code == 0) {
    ++finished_;
    arrivals_.finished(index);
  } else if (code != int(ExitCode::interrupted) && !failure_) {
    log_error("segment {} failed (exit {}); the clip's other segments stop", index, code);
    failure_ = code;
    failure_error_ = error;
    stop_ = true;
    arrivals_.abandon();
  }
  return code;
}

void SegmentedClip::add_progress(int64_t& frames, double& media_seconds) const {
  for (const SharedProgress& p : progress_) frames += p.frames, media_seconds += p.media_seconds;
}

SegmentedOutcome SegmentedClip::finish(bool interrupted) {
  SegmentedOutcome out;
  {
    std::lock_guard lock(mutex_);
    out.started = !exit_codes_.empty();
    if (finished_ < segments()) arrivals_.abandon();
  }
  concat_.join();
  out.seconds = std::chrono::duration<double>(joined_at_ - created_).count();
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [index, code] : exit_codes_) {
    nlohmann::json entry = {{"index", index},
                            {"exit_code", code},
                            {"worker", workers_.at(index)},
                            {"stats", read_json_file(manifest_.segment_stats_path(index))}};
    if (const auto d = devices_.find(index); d != devices_.end()) entry["device"] = d->second;
    list.push_back(std::move(entry));
  }
  out.stats = {{"workdir", manifest_.workdir}, {"segments", list}};
  if (joined_) {
    out.frames = joined_->frames;
    remove_in_background(manifest_.workdir);
    return out;
  }
  auto fail = [&](int code, const std::string& error) {
    out.code = code;
    out.error = error;
    log_error("the finished segments stay in {}; the same command again redoes only the others",
              manifest_.workdir);
    return out;
  };
  if (failure_) return fail(failure_, failure_error_);
  if (concat_error_ && !interrupted) {
    try {
      std::rethrow_exception(concat_error_);
    } catch (const Error& e) {
      log_error("{}", e.what());
      return fail(int(e.code()), e.what());
    } catch (const std::exception& e) {
      log_error("internal error: {}", e.what());
      return fail(int(ExitCode::internal), std::string("internal error: ") + e.what());
    }
  }
  if (!out.started) return out;
  // Stopped: what was finished from the start plays, as after a --jobs run's Ctrl-C.
  out.code = int(ExitCode::interrupted);
  out.error = "interrupted";
  try {
    ConcatOptions prefix;
    prefix.finished_prefix_only = true;
    out.frames = concat_segments(manifest_, prefix).frames;
  } catch (const Error& e) {
    log_warning("{}: nothing joined: {}", manifest_.output.path, e.what());
  }
  return out;
}

}  // namespace sp
