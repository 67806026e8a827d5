#include "stylepipe/transcode.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <thread>

#include "api/auto_devices.h"
#include "api/batch_request.h"
#include "api/public_errors.h"
#include "api/request_options.h"
#include "orchestration/auto_jobs.h"
#include "orchestration/concat.h"
#include "orchestration/gpu_need.h"
#include "orchestration/parallel_run.h"
#include "orchestration/segment_plan.h"
#include "pipeline/cores.h"
#include "pipeline/device.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace stylepipe {
namespace {

using sp::Error;
using sp::log_info;

// `run` without a manifest needs CONFIG, -i and -o; with one, none of them.
void check_request(const TranscodeRequest& a) {
  if (!a.manifest.empty()) {
    if (!a.config_path.empty() || !a.input.empty() || !a.output.empty())
      throw Error(sp::ExitCode::usage, "run --manifest takes its config, input and output from the plan: drop CONFIG, -i and -o");
    if (a.jobs != 0) throw Error(sp::ExitCode::usage, "--manifest runs one segment: it does not combine with --jobs");
    return;
  }
  if (a.config_path.empty() || a.input.empty() || a.output.empty())
    throw Error(sp::ExitCode::usage, "run needs CONFIG, -i INPUT and -o OUTPUT (or --manifest M for one segment of a plan)");
  if (a.index || a.force) throw Error(sp::ExitCode::usage, "--index and --force go with --manifest");
  if (a.jobs == 0 && (!a.devices.empty() || a.segments || a.segment_seconds || !a.workdir.empty() || a.keep_segments ||
                     a.worker_processes))
    throw Error(sp::ExitCode::usage,
                "--devices, --segments, --segment-seconds, --workdir, --keep-segments and --worker-processes go with --jobs");
  if (!a.devices.empty() && a.backend == "cpu")
    throw Error(sp::ExitCode::usage, "--devices needs the CUDA backend, not --backend cpu");
}

// A segment-parallel run cuts a file; what only makes sense for one stream
// from start to end is refused.
void refuse_single_stream_flags(const TranscodeRequest& a, const char* mode) {
  const char* flag = a.frames >= 0 ? "--frames" : a.start > 0 ? "--start" : a.duration >= 0 ? "--duration"
                     : a.low_latency ? "--low-latency" : !a.input_format.empty() ? "-f (input)"
                     : a.input == "-" ? "-i -" : a.drop_policy != "block" ? "--drop-policy" : nullptr;
  if (flag) throw Error(sp::ExitCode::usage, fmt::format("{} does not combine with {}: segments are cut from a file", mode, flag));
}

void print_plan(const sp::Manifest& m) {
  std::printf("manifest: %s\nsegments: %zu\nwarm-up frames: %d\nkeyframes from: %s\n", m.path.c_str(),
              m.segments.size(), m.warmup_frames, m.keyframe_source.c_str());
  for (const sp::SegmentPlan& s : m.segments) {
    const std::string end = s.end_seconds < 0 ? std::string("end") : fmt::format("{:.3f} s", s.end_seconds);
    std::printf("segment %d: %.3f s .. %s -> %s\n", s.index, s.begin_seconds, end.c_str(), s.file.c_str());
  }
}

int run_segment(const TranscodeRequest& a) {
  const sp::Manifest m = sp::read_manifest(a.manifest);
  std::string source = "--index";
  const std::optional<int> index = a.index ? a.index : sp::index_from_environment(&source);
  if (!index)
    throw Error(sp::ExitCode::usage, "run --manifest needs --index I, or an array job's SLURM_ARRAY_TASK_ID, "
                                     "JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX");
  if (source != "--index") log_info("segment {} (from {})", *index, source);
  return sp::run_segment(m, *index, detail::worker_overrides(a));
}

// `work`'s result; where it throws, the error `arguments` holds (a wrong
// --devices, checked on another thread meanwhile) is said instead of its own.
template <class Arguments, class Work>
auto arguments_first(std::future<Arguments>& arguments, Work work) {
  try {
    return work();
  } catch (...) {
    (void)arguments.get();
    throw;
  }
}

using RequestClock = std::chrono::steady_clock;

// `requested`: when the request came, so that the run's clock counts what
// went before its plan too (--jobs auto counts the GPUs, the driver's start).
int run_parallel(const TranscodeRequest& a, RequestClock::time_point requested,
                 std::optional<sp::AutoJobsChoice> jobs_auto = std::nullopt) {
  refuse_single_stream_flags(a, "--jobs");
  sp::ParallelRunOptions o;
  o.jobs = a.jobs;
  o.worker_processes = a.worker_processes;
  // The driver's start (0.2 s a visible GPU) and, for worker threads, each
  // device's context, while the input is planned.
  std::promise<std::optional<std::vector<int>>> devices_known;  // nullopt: no CUDA
  std::future<std::optional<std::vector<int>>> devices = devices_known.get_future();
  const std::future<void> contexts =
      std::async(std::launch::async, [&a, &devices_known, caller_device = sp::current_cuda_device()] {
        std::vector<int> list;
        try {
          if (!a.devices.empty()) list = sp::parse_device_list(a.devices, sp::cuda_device_count());
          if (a.backend == "cpu" || !sp::cuda_device_available()) {
            devices_known.set_value(std::nullopt);
            return;
          }
          // A worker process sees only its own GPU: with no --devices, this process's first.
          if (list.empty() && a.worker_processes) list = {0};
        } catch (...) {
          devices_known.set_exception(std::current_exception());
          return;
        }
        devices_known.set_value(list);
        // Worker threads share their device's context.
        if (!a.worker_processes) sp::start_cuda_contexts(list.empty() ? std::vector<int>{caller_device} : list);
      });
  sp::Manifest m = arguments_first(devices, [&] { return sp::make_plan(detail::plan_request(a, a.jobs)); });
  if (const auto listed = devices.get()) o.devices = *listed;  // refused before the plan is saved
  sp::save_plan(m);
  o.plan_seconds = std::chrono::duration<double>(RequestClock::now() - requested).count();
  log_info("{} segments ({} warm-up frames each) in {}, {} at a time", m.segments.size(), m.warmup_frames, m.workdir,
           a.jobs);
  o.worker = detail::worker_overrides(a);
  // N encoders each taking every core would fight over them: each gets its share.
  o.worker.threads = a.threads.value_or(sp::threads_each(a.jobs));
  o.log_level = a.quiet ? "error" : a.log_level;
  o.progress = o.worker.progress;
  o.stats_json_path = a.stats_json;
  o.keep_segments = a.keep_segments;
  o.jobs_auto = std::move(jobs_auto);
  // The workers join the context still starting: opening their inputs overlaps with it.
  const int code = sp::run_parallel(m, o);
  contexts.wait();  // a failure to start was the workers' to report
  return code;
}

// One run from start to end, its clock from `requested`, on the calling
// thread's GPU. With a progress callback it runs on a thread of its own, and
// the caller's thread reports its counts every 100 ms.
int run_single(const TranscodeRequest& a, RequestClock::time_point requested,
               std::optional<sp::AutoJobsChoice> jobs_auto = std::nullopt) {
  const sp::Config config = sp::load_config(a.config_path);  // every config error before any work
  sp::TranscodeOptions o = detail::transcode_options(a, config);
  o.stop = a.cancel;
  o.clock_start = requested;
  o.jobs_auto = std::move(jobs_auto);
  sp::RunStats stats;
  if (!a.on_progress) return sp::run_transcode(o, stats);
  sp::SharedProgress counts;
  o.progress_sink = &counts;
  // The run's thread takes the caller's GPU: a new thread's own is the first.
  std::future<int> run = std::async(std::launch::async, [&, device = sp::current_cuda_device()] {
    sp::use_cuda_device(device);
    return sp::run_transcode(o, stats);
  });
  while (run.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
    a.on_progress({counts.frames.load(), counts.media_seconds.load()});
  const int code = run.get();
  a.on_progress({counts.frames.load(), counts.media_seconds.load()});
  return code;
}

// The GPU a request's --devices names first; nullopt for none, for the CPU
// backend, and where no GPU is present (the run then says why it uses the
// CPU, or refuses a list it cannot run).
std::optional<int> first_listed_gpu(const TranscodeRequest& a) {
  if (a.devices.empty() || a.backend == "cpu" || !sp::cuda_device_available()) return std::nullopt;
  return sp::parse_device_list(a.devices, sp::cuda_device_count()).front();
}

// The calling thread's CUDA device, set again when a run that chose its own returns.
class CallerDeviceKept {
 public:
  CallerDeviceKept() : device_(sp::current_cuda_device()) {}
  ~CallerDeviceKept() {
    try {
      sp::use_cuda_device(device_);
    } catch (const std::exception& e) {
      sp::log_warning("the calling thread's GPU {} could not be made current again: {}", device_, e.what());
    }
  }
  CallerDeviceKept(const CallerDeviceKept&) = delete;
  CallerDeviceKept& operator=(const CallerDeviceKept&) = delete;

 private:
  int device_;
};

// --jobs auto: the workers from the GPUs, the cores, the input's length and
// the chain's warm-up (sp::choose_jobs); one worker is a single run.
int run_with_auto_jobs(TranscodeRequest a, RequestClock::time_point requested) {
  const sp::Config config = sp::load_config(a.config_path);  // every config error before any work
  const detail::GpuHostFacts facts = detail::gpu_host_facts();  // read once: the GPUs to keep, the warm-up's weight
  detail::choose_auto_devices(a, facts);
  // The GPUs are counted (the driver's start) while the input is probed.
  std::future<sp::AutoJobsHost> host_known = std::async(std::launch::async, [&a] { return detail::auto_jobs_host(a); });
  const bool one_stream = detail::reads_one_stream(a);
  sp::AutoJobs choice{1, "1 worker: the input is read as one stream (a pipe, a device, --frames, --start or --duration)"};
  const std::optional<sp::InputLength> probed =
      one_stream ? std::nullopt
                 : std::optional(arguments_first(host_known, [&] { return sp::probe_input_length(a.input); }));
  sp::AutoJobsHost host = host_known.get();
  if (probed) {
    const sp::InputLength& length = *probed;
    host.input_seconds = length.seconds;
    host.warmup_seconds = sp::warmup_seconds_at(sp::chain_warmup(config), length.frame_rate);
    host.warmup_weight = detail::warmup_weight(a, config, length, host.gpus, facts);
    host.gpu_time_unknown = !sp::chain_gpu_cost(config, length.size);
    choice = sp::choose_jobs(host);
  }
  log_info("--jobs auto: {}", choice.why);
  // One worker is a single run, unless segment flags ask for segments anyway.
  const bool segments_asked = a.segments || a.segment_seconds || !a.workdir.empty() || a.keep_segments ||
                              a.worker_processes;
  a.jobs = choice.jobs;
  sp::AutoJobsChoice chosen{choice.jobs, choice.why, a.devices, a.devices_auto_reason};
  if (a.jobs > 1 || segments_asked) return run_parallel(a, requested, std::move(chosen));
  a.jobs = 0;
  // A single run, on the first GPU listed (--devices 2 means GPU 2, not the caller's).
  const std::optional<int> first = first_listed_gpu(a);
  if (first) chosen.devices = std::to_string(*first);
  a.devices.clear();
  std::optional<CallerDeviceKept> caller;
  if (first) {
    caller.emplace();
    sp::use_cuda_device(*first);
  }
  return run_single(a, requested, std::move(chosen));
}

}  // namespace

int transcode(const TranscodeRequest& request) {
  const RequestClock::time_point requested = RequestClock::now();
  return detail::guarded([&] {
    if (detail::is_batch(request)) return detail::run_batch(request);
    check_request(request);
    if (!request.manifest.empty()) return run_segment(request);
    if (request.jobs == TranscodeRequest::kJobsAuto) return run_with_auto_jobs(request, requested);
    if (request.jobs > 0) return run_parallel(request, requested);
    return run_single(request, requested);
  });
}

int plan(const TranscodeRequest& a) {
  return detail::guarded([&] {
    if (a.config_path.empty() || a.input.empty() || a.output.empty())
      throw sp::Error(sp::ExitCode::usage, "plan needs CONFIG, -i INPUT and -o OUTPUT");
    if (!a.inputs.empty()) throw sp::Error(sp::ExitCode::usage, "plan cuts one input: give one -i");
    refuse_single_stream_flags(a, "plan");
    if (!a.segments && !a.segment_seconds)
      throw sp::Error(sp::ExitCode::usage, "plan needs --segments N or --segment-seconds S");
    sp::Manifest m = sp::make_plan(detail::plan_request(a, 0));
    sp::save_plan(m);
    print_plan(m);
    return 0;
  });
}

int concat(const std::string& manifest_path, bool overwrite) {
  return detail::guarded([&] {
    const sp::Manifest m = sp::read_manifest(manifest_path);
    sp::ConcatOptions o;
    o.overwrite = overwrite;
    const sp::ConcatResult r = sp::concat_segments(m, o);
    log_info("{} segments, {} frames, {} copied packets -> {}", r.segments, r.frames, r.packets_copied, r.output);
    return 0;
  });
}

void install_interrupt_handlers() { sp::install_interrupt_handlers(); }

}  // namespace stylepipe
