#include "api/request_options.h"

#include <algorithm>
#include <regex>
#include <set>

#include "orchestration/parallel_run.h"
#include "pipeline/cores.h"
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/stage_chain.h"

namespace stylepipe::detail {

using sp::Error;
using sp::ExitCode;

sp::Size parse_size(const std::string& text, const std::string& flag) {
  static const std::regex pattern(R"((\d+)x(\d+))");
  std::smatch m;
  if (!std::regex_match(text, m, pattern) || std::stoi(m[1]) <= 0 || std::stoi(m[2]) <= 0)
    throw Error(ExitCode::usage, flag + ": '" + text + "' is not a size like 1920x1080");
  return {std::stoi(m[1]), std::stoi(m[2])};
}

sp::PixelFormat parse_pixel_format(const std::string& text, const std::string& flag) {
  using sp::PixelFormat;
  for (PixelFormat f : {PixelFormat::rgba, PixelFormat::bgr0, PixelFormat::rgb24, PixelFormat::gray,
                        PixelFormat::yuv420p, PixelFormat::yuv444p, PixelFormat::nv12, PixelFormat::p010})
    if (text == sp::to_string(f)) return f;
  throw Error(ExitCode::usage, flag + ": '" + text + "' is not one of rgba, bgr0, rgb24, gray, yuv420p, yuv444p, nv12, p010");
}

// What only CUDA does, asked of a CPU-only build: refused up front, with why.
static void refuse_what_this_build_lacks(const TranscodeRequest& a) {
  if (sp::kBuildHasCuda) return;
  if (a.hwdec == "nvdec") throw Error(ExitCode::unavailable, std::string("--hwdec nvdec: ") + sp::kNoCudaInBuild);
  if (a.encoder == "nvenc") throw Error(ExitCode::unavailable, std::string("--encoder nvenc: ") + sp::kNoCudaInBuild);
}

template <class Choice>
static Choice parsed(const std::optional<Choice>& choice, const std::string& flag, const std::string& text) {
  if (!choice) throw Error(ExitCode::usage, flag + ": '" + text + "' is not one of its choices");
  return *choice;
}

sp::TranscodeOptions transcode_options(const TranscodeRequest& a, const sp::Config& config) {
  refuse_what_this_build_lacks(a);
  sp::TranscodeOptions o;
  o.input.url = a.input;
  o.input.format = a.input_format;
  o.input.pixel_format = a.input_pixel_format;
  if (!a.input_size.empty()) o.input.size = parse_size(a.input_size, "--size");
  o.input.rate = a.input_rate;
  o.input.start_seconds = a.start;
  o.input.duration_seconds = a.duration;
  o.input.max_frames = a.frames;
  o.input.low_latency = a.low_latency;
  o.input.hwdec = parsed(sp::parse_hwdec(a.hwdec), "--hwdec", a.hwdec);
  o.input.threads = a.threads.value_or(0);

  o.output.url = a.output;
  o.output.format = !a.output_format.empty() ? a.output_format : config.output.format.value_or("");
  o.output.codec = !a.codec.empty() ? a.codec : config.output.codec.value_or("");
  o.output.crf = a.crf.value_or(config.output.crf.value_or(18));
  o.output.preset = !a.preset.empty() ? a.preset : config.output.preset.value_or("medium");
  o.output.pixel_format = !a.pixel_format.empty() ? a.pixel_format : config.output.pixel_format.value_or("");
  o.output.overwrite = a.overwrite;
  o.output.low_latency = a.low_latency;
  o.output.encoder = parsed(sp::parse_encoder_choice(a.encoder), "--encoder", a.encoder);
  o.output.threads = a.threads.value_or(0);

  o.backend = a.backend;
  o.frames_in_flight = a.frames_in_flight.value_or(config.settings.frames_in_flight);
  o.queue_depth = a.queue_depth.value_or(config.settings.queue_depth);
  o.low_latency = a.low_latency;
  o.overflow = a.drop_policy == "drop-oldest" ? sp::OverflowPolicy::drop_oldest : sp::OverflowPolicy::block;
  sp::ProgressMode mode = sp::ProgressMode::automatic;
  if (!sp::parse_progress_mode(a.progress, &mode))
    throw Error(ExitCode::usage, "--progress: '" + a.progress + "' is not auto, tty, plain, json or none");
  o.progress = a.quiet ? sp::ProgressMode::none : mode;
  o.stats_json_path = a.stats_json;
  o.stages = stage_specs(config);
  return o;
}

sp::BenchOptions bench_options(const BenchRequest& a) {
  sp::BenchOptions o;
  o.input = a.input;
  o.size = parse_size(a.size, "--size");
  o.format = parse_pixel_format(a.pixel_format, "--pix-fmt");
  o.frames = a.frames;
  o.warmup = a.warmup;
  o.frames_in_flight = a.frames_in_flight;
  o.backend = a.backend;
  return o;
}

std::vector<sp::StageSpec> stage_specs(const sp::Config& config) {
  std::vector<sp::StageSpec> specs;
  for (const auto& s : config.stages) specs.push_back({s.name, s.params});
  return specs;
}

sp::AutoJobsHost auto_jobs_host(const TranscodeRequest& request) {
  sp::AutoJobsHost host;
  host.cores = sp::usable_cores();
  if (request.backend == "cpu") return host;
  // A list naming GPUs that are not there is refused, CUDA or not.
  const std::vector<int> devices =
      request.devices.empty() ? std::vector<int>{0} : sp::parse_device_list(request.devices, sp::cuda_device_count());
  if (sp::cuda_device_available()) host.gpus = int(std::set<int>(devices.begin(), devices.end()).size());
  return host;
}

sp::PlanRequest plan_request(const TranscodeRequest& a, int jobs) {
  const sp::Config config = sp::load_config(a.config_path);  // every config error before any work
  const sp::TranscodeOptions single = detail::transcode_options(a, config);
  sp::PlanRequest r;
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

sp::WorkerOverrides worker_overrides(const TranscodeRequest& a) {
  sp::WorkerOverrides o;
  // Flags on the worker's own command line override the plan's defaults.
  if (a.backend != "auto") o.backend = a.backend;
  if (a.hwdec != "auto") o.hwdec = a.hwdec;
  if (a.encoder != "auto") o.encoder = a.encoder;
  o.frames_in_flight = a.frames_in_flight;
  o.queue_depth = a.queue_depth;
  o.threads = a.threads;
  sp::ProgressMode mode = sp::ProgressMode::automatic;
  sp::parse_progress_mode(a.progress, &mode);
  o.progress = a.quiet ? sp::ProgressMode::none : mode;
  o.stats_json_path = a.stats_json;
  o.force = a.force;
  return o;
}

bool reads_one_stream(const TranscodeRequest& a) {
  return a.frames >= 0 || a.start > 0 || a.duration >= 0 || a.low_latency || !a.input_format.empty() ||
         a.input == "-" || a.drop_policy != "block";
}

}  // namespace stylepipe::detail
