#include "cli/arguments.h"

#include <cstdio>
#include <regex>

#include "pipeline/device.h"
#include "pipeline/errors.h"

namespace sp::cli {

void add_run_arguments(CLI::App& run, RunArguments& a, std::string& log_level, bool& quiet) {
  // Required unless --manifest names a plan (checked after parsing).
  run.add_option("config", a.config_path, "YAML config");
  run.add_option("-i,--input", a.input, "Input file or - for stdin");
  run.add_option("-o,--output", a.output, "Output file or - for stdout");
  run.add_option("-f,--format", a.output_format, "Output container (default: from the extension)");
  run.add_option("--input-format", a.input_format, "Input demuxer or device (also: -f before -i)");
  run.add_option("--input-pix-fmt", a.input_pixel_format, "Raw input pixel format (also: --pix-fmt before -i)");
  run.add_option("--input-size", a.input_size, "Raw input size WxH (also: --size before -i)");
  run.add_option("--input-rate", a.input_rate, "Raw input frame rate (also: --rate before -i)");
  run.add_option("--backend", a.backend, "auto|cuda|cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  run.add_flag("-y,--overwrite", a.overwrite, "Overwrite an existing output");
  run.add_option("--frames", a.frames, "Stop after N frames")->check(CLI::PositiveNumber);
  run.add_option("--start", a.start, "Start at this time in seconds")->check(CLI::NonNegativeNumber);
  run.add_option("--duration", a.duration, "Process this many seconds")->check(CLI::PositiveNumber);
  run.add_option("--codec", a.codec, "Video encoder: libx264, ffv1, png, rawvideo, ...");
  run.add_option("--crf", a.crf, "x264 constant rate factor 0..51")->check(CLI::Range(0, 51));
  run.add_option("--preset", a.preset, "x264 preset: ultrafast .. placebo");
  run.add_option("--pix-fmt", a.pixel_format, "Output pixel format (after -i)");
  run.add_option("--stats-json", a.stats_json, "Write run statistics as JSON");
  run.add_option("--progress", a.progress, "auto|tty|plain|json|none")
      ->check(CLI::IsMember({"auto", "tty", "plain", "json", "none"}));
  run.add_flag("--quiet", a.quiet, "Only errors");
  run.add_option("--log-level", log_level, "quiet|error|warning|info|debug");
  (void)quiet;
  run.add_option("--frames-in-flight", a.frames_in_flight, "Frames processed concurrently on the GPU")
      ->check(CLI::Range(1, 16));
  run.add_option("--queue-depth", a.queue_depth, "Frames buffered between threads")->check(CLI::Range(1, 64));
  run.add_option("--encoder", a.encoder,
                 "auto (NVENC for the --codec's family where the GPU has it), nvenc (or fail), software")
      ->check(CLI::IsMember({"auto", "nvenc", "software"}));
  run.add_option("--hwdec", a.hwdec, "Hardware decoding: auto (NVDEC where it can), nvdec (or fail), none")
      ->check(CLI::IsMember({"auto", "nvdec", "none"}));
  run.add_option("--threads", a.threads,
                 "Threads of the software decoder and of the encoder (default: one per core; --jobs gives each worker its share)")
      ->check(CLI::Range(1, 1024));
  run.add_flag("--low-latency", a.low_latency, "Live input: queue depth 1, no lookahead, flush every frame");
  run.add_option("--drop-policy", a.drop_policy, "When the consumer is slower: block|drop-oldest")
      ->check(CLI::IsMember({"block", "drop-oldest"}));
}

void add_segment_arguments(CLI::App& command, RunArguments& a) {
  command.add_option("--segments", a.segments, "Cut the input into this many segments at keyframes")
      ->check(CLI::Range(1, 100000));
  command.add_option("--segment-seconds", a.segment_seconds, "Cut the input every S seconds at keyframes")
      ->check(CLI::PositiveNumber);
  command.add_option("--workdir", a.workdir, "Where the manifest and segments go (default: OUTPUT.parts)");
}

void add_bench_arguments(CLI::App& bench, BenchArguments& a) {
  bench.add_option("--config", a.config_path, "YAML config (default: conversion only)");
  bench.add_option("-i,--input", a.input, "Benchmark on frames decoded from this file");
  bench.add_option("--size", a.size, "Generated frame size WxH");
  bench.add_option("--pix-fmt", a.pixel_format, "Generated frame format");
  bench.add_option("--frames", a.frames, "Timed frames")->check(CLI::PositiveNumber);
  bench.add_option("--warmup", a.warmup, "Untimed warm-up frames")->check(CLI::NonNegativeNumber);
  bench.add_option("--frames-in-flight", a.frames_in_flight, "Frames in flight")->check(CLI::Range(1, 16));
  bench.add_option("--backend", a.backend, "auto|cuda|cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  bench.add_option("--json", a.json_path, "Write the report as JSON");
}

std::vector<std::string> position_dependent_input_flags(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool seen_input = false;
  for (const std::string& arg : args) {
    if (arg == "-i" || arg == "--input" || arg.rfind("--input=", 0) == 0) seen_input = true;
    if (!seen_input && (arg == "-f" || arg == "--format")) out.push_back("--input-format");
    else if (!seen_input && arg == "--pix-fmt") out.push_back("--input-pix-fmt");
    else if (!seen_input && arg == "--size") out.push_back("--input-size");
    else if (!seen_input && arg == "--rate") out.push_back("--input-rate");
    else out.push_back(arg);
  }
  // Only `run` has input flags; bench keeps --size / --pix-fmt as they are.
  if (!args.empty() && args[0] != "run" && args[0] != "plan") return args;
  return out;
}

Size parse_size(const std::string& text, const std::string& flag) {
  static const std::regex pattern(R"((\d+)x(\d+))");
  std::smatch m;
  if (!std::regex_match(text, m, pattern) || std::stoi(m[1]) <= 0 || std::stoi(m[2]) <= 0)
    throw Error(ExitCode::usage, flag + ": '" + text + "' is not a size like 1920x1080");
  return {std::stoi(m[1]), std::stoi(m[2])};
}

PixelFormat parse_pixel_format(const std::string& text, const std::string& flag) {
  for (PixelFormat f : {PixelFormat::rgba, PixelFormat::bgr0, PixelFormat::rgb24, PixelFormat::gray,
                        PixelFormat::yuv420p, PixelFormat::yuv444p, PixelFormat::nv12, PixelFormat::p010})
    if (text == to_string(f)) return f;
  throw Error(ExitCode::usage, flag + ": '" + text + "' is not one of rgba, bgr0, rgb24, gray, yuv420p, yuv444p, nv12, p010");
}

// What only CUDA does, asked of a CPU-only build: refused up front, with why.
static void refuse_what_this_build_lacks(const RunArguments& a) {
  if (kBuildHasCuda) return;
  if (a.hwdec == "nvdec") throw Error(ExitCode::unavailable, std::string("--hwdec nvdec: ") + kNoCudaInBuild);
  if (a.encoder == "nvenc") throw Error(ExitCode::unavailable, std::string("--encoder nvenc: ") + kNoCudaInBuild);
}

TranscodeOptions transcode_options(const RunArguments& a, const Config& config) {
  refuse_what_this_build_lacks(a);
  TranscodeOptions o;
  o.input.url = a.input;
  o.input.format = a.input_format;
  o.input.pixel_format = a.input_pixel_format;
  if (!a.input_size.empty()) o.input.size = parse_size(a.input_size, "--size");
  o.input.rate = a.input_rate;
  o.input.start_seconds = a.start;
  o.input.duration_seconds = a.duration;
  o.input.max_frames = a.frames;
  o.input.low_latency = a.low_latency;
  o.input.hwdec = *parse_hwdec(a.hwdec);
  o.input.threads = a.threads.value_or(0);

  o.output.url = a.output;
  o.output.format = !a.output_format.empty() ? a.output_format : config.output.format.value_or("");
  o.output.codec = !a.codec.empty() ? a.codec : config.output.codec.value_or("");
  o.output.crf = a.crf.value_or(config.output.crf.value_or(18));
  o.output.preset = !a.preset.empty() ? a.preset : config.output.preset.value_or("medium");
  o.output.pixel_format = !a.pixel_format.empty() ? a.pixel_format : config.output.pixel_format.value_or("");
  o.output.overwrite = a.overwrite;
  o.output.low_latency = a.low_latency;
  o.output.encoder = *parse_encoder_choice(a.encoder);
  o.output.threads = a.threads.value_or(0);

  o.backend = a.backend;
  o.frames_in_flight = a.frames_in_flight.value_or(config.settings.frames_in_flight);
  o.queue_depth = a.queue_depth.value_or(config.settings.queue_depth);
  o.low_latency = a.low_latency;
  o.overflow = a.drop_policy == "drop-oldest" ? OverflowPolicy::drop_oldest : OverflowPolicy::block;
  ProgressMode mode = ProgressMode::automatic;
  parse_progress_mode(a.progress, &mode);
  o.progress = a.quiet ? ProgressMode::none : mode;
  o.stats_json_path = a.stats_json;
  return o;
}

BenchOptions bench_options(const BenchArguments& a) {
  BenchOptions o;
  o.input = a.input;
  o.size = parse_size(a.size, "--size");
  o.format = parse_pixel_format(a.pixel_format, "--pix-fmt");
  o.frames = a.frames;
  o.warmup = a.warmup;
  o.frames_in_flight = a.frames_in_flight;
  o.backend = a.backend;
  return o;
}

}  // namespace sp::cli
