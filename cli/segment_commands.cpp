#include "cli/segment_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <thread>

#include "orchestration/concat.h"
#include "orchestration/parallel_run.h"
#include "orchestration/segment_plan.h"
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace sp::cli {
namespace {

// A segment-parallel run cuts a file; what only makes sense for one stream
// from start to end is refused.
void refuse_single_stream_flags(const RunArguments& a, const char* mode) {
  const char* flag = a.frames >= 0 ? "--frames" : a.start > 0 ? "--start" : a.duration >= 0 ? "--duration"
                     : a.low_latency ? "--low-latency" : !a.input_format.empty() ? "-f (input)"
                     : a.input == "-" ? "-i -" : a.drop_policy != "block" ? "--drop-policy" : nullptr;
  if (flag) throw Error(ExitCode::usage, fmt::format("{} does not combine with {}: segments are cut from a file", mode, flag));
}

PlanRequest plan_request(const RunArguments& a, int jobs) {
  const Config config = load_config(a.config_path);  // every config error before any work
  const TranscodeOptions single = transcode_options(a, config);
  PlanRequest r;
  r.config_path = a.config_path;
  r.input_path = a.input;
  r.output = {single.output.url, single.output.format, single.output.codec, single.output.preset,
              single.output.pixel_format, single.output.crf, single.output.overwrite};
  r.segments = a.segments.value_or(0);
  r.jobs = jobs;
  r.segment_seconds = a.segment_seconds.value_or(0);
  r.workdir = a.workdir;
  r.backend = a.backend;
  r.hwdec = a.hwdec;
  r.encoder = a.encoder;
  return r;
}

void print_plan(const Manifest& m) {
  std::printf("manifest: %s\nsegments: %zu\nwarm-up frames: %d\nkeyframes from: %s\n", m.path.c_str(),
              m.segments.size(), m.warmup_frames, m.keyframe_source.c_str());
  for (const SegmentPlan& s : m.segments) {
    const std::string end = s.end_seconds < 0 ? std::string("end") : fmt::format("{:.3f} s", s.end_seconds);
    std::printf("segment %d: %.3f s .. %s -> %s\n", s.index, s.begin_seconds, end.c_str(), s.file.c_str());
  }
}

WorkerOverrides worker_overrides(const RunArguments& a) {
  WorkerOverrides o;
  // Flags on the worker's own command line override the plan's defaults.
  if (a.backend != "auto") o.backend = a.backend;
  if (a.hwdec != "auto") o.hwdec = a.hwdec;
  if (a.encoder != "auto") o.encoder = a.encoder;
  o.frames_in_flight = a.frames_in_flight;
  o.queue_depth = a.queue_depth;
  o.threads = a.threads;
  ProgressMode mode = ProgressMode::automatic;
  parse_progress_mode(a.progress, &mode);
  o.progress = a.quiet ? ProgressMode::none : mode;
  o.stats_json_path = a.stats_json;
  o.force = a.force;
  return o;
}

}  // namespace

void add_parallel_arguments(CLI::App& run, RunArguments& a) {
  run.add_option("--manifest", a.manifest, "Run one segment of this plan (from `stylepipe plan`)");
  run.add_option("--index", a.index,
                 "The segment (default: SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX)")
      ->check(CLI::NonNegativeNumber);
  run.add_flag("--force", a.force, "Redo a segment that is already finished");
  run.add_option("--jobs", a.jobs, "Cut the input into segments and run this many workers at a time")
      ->check(CLI::Range(1, 256));
  run.add_option("--devices", a.devices, "GPUs the --jobs workers spread over: all, or a list like 0,1 (0,0: two on GPU 0)");
  run.add_flag("--keep-segments", a.keep_segments, "Keep the work directory after --jobs joined the output");
  run.add_flag("--worker-processes", a.worker_processes,
               "Run each --jobs worker as its own process (its own CUDA context; a crash stays in its worker). "
               "Default: threads sharing one context, or processes when --devices names several GPUs");
  add_segment_arguments(run, a);
}

void check_run_arguments(const RunArguments& a) {
  if (!a.manifest.empty()) {
    if (!a.config_path.empty() || !a.input.empty() || !a.output.empty())
      throw Error(ExitCode::usage, "run --manifest takes its config, input and output from the plan: drop CONFIG, -i and -o");
    if (a.jobs > 0) throw Error(ExitCode::usage, "--manifest runs one segment: it does not combine with --jobs");
    return;
  }
  if (a.config_path.empty() || a.input.empty() || a.output.empty())
    throw Error(ExitCode::usage, "run needs CONFIG, -i INPUT and -o OUTPUT (or --manifest M for one segment of a plan)");
  if (a.index || a.force) throw Error(ExitCode::usage, "--index and --force go with --manifest");
  if (a.jobs == 0 && (!a.devices.empty() || a.segments || a.segment_seconds || !a.workdir.empty() || a.keep_segments ||
                     a.worker_processes))
    throw Error(ExitCode::usage,
                "--devices, --segments, --segment-seconds, --workdir, --keep-segments and --worker-processes go with --jobs");
}

int cmd_plan(const RunArguments& a) {
  refuse_single_stream_flags(a, "plan");
  if (!a.segments && !a.segment_seconds) throw Error(ExitCode::usage, "plan needs --segments N or --segment-seconds S");
  Manifest m = make_plan(plan_request(a, 0));
  save_plan(m);
  print_plan(m);
  return 0;
}

int cmd_run_segment(const RunArguments& a) {
  const Manifest m = read_manifest(a.manifest);
  std::string source = "--index";
  const std::optional<int> index = a.index ? a.index : index_from_environment(&source);
  if (!index)
    throw Error(ExitCode::usage, "run --manifest needs --index I, or an array job's SLURM_ARRAY_TASK_ID, "
                                 "JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX");
  if (source != "--index") log_info("segment {} (from {})", *index, source);
  install_interrupt_handlers();
  const int code = run_segment(m, *index, worker_overrides(a));
  release_cuda_context();
  return code;
}

int cmd_run_parallel(const RunArguments& a, const std::string& log_level) {
  refuse_single_stream_flags(a, "--jobs");
  ParallelRunOptions o;
  o.jobs = a.jobs;
  if (!a.devices.empty()) {
    if (a.backend == "cpu") throw Error(ExitCode::usage, "--devices needs the CUDA backend, not --backend cpu");
    o.devices = parse_device_list(a.devices, cuda_device_count());
  }
  o.worker_processes = a.worker_processes;
  // Worker threads share one CUDA context: it starts while the input is planned.
  std::future<void> context;
  if (a.backend != "cpu" && workers_as_threads(o) && cuda_device_available())
    context = std::async(std::launch::async, start_cuda_context);
  const auto planning = std::chrono::steady_clock::now();
  Manifest m = make_plan(plan_request(a, a.jobs));
  save_plan(m);
  o.plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - planning).count();
  log_info("{} segments ({} warm-up frames each) in {}, {} at a time", m.segments.size(), m.warmup_frames, m.workdir,
           a.jobs);
  o.worker = worker_overrides(a);
  // N encoders each taking every core would fight over them: each gets its share.
  o.worker.threads = a.threads.value_or(std::max(1, int(std::lround(1.5 * std::thread::hardware_concurrency() / a.jobs))));
  o.log_level = a.quiet ? "error" : log_level;
  o.progress = o.worker.progress;
  o.stats_json_path = a.stats_json;
  o.keep_segments = a.keep_segments;
  install_interrupt_handlers();
  // The workers join the context still starting: opening their inputs overlaps with it.
  const int code = run_parallel(m, o);
  if (context.valid()) context.wait();  // a failure to start was the workers' to report
  return code;
}

int cmd_concat(const std::string& manifest_path, bool overwrite) {
  const Manifest m = read_manifest(manifest_path);
  ConcatOptions o;
  o.overwrite = overwrite;
  const ConcatResult r = concat_segments(m, o);
  log_info("{} segments, {} frames, {} copied packets -> {}", r.segments, r.frames, r.packets_copied, r.output);
  return 0;
}

}  // namespace sp::cli
