#include "cli/arguments.h"


namespace sp::cli {

void add_run_arguments(CLI::App& run, stylepipe::TranscodeRequest& a, std::string& log_level) {
  // Required unless --manifest names a plan (checked after parsing).
  run.add_option("config", a.config_path, "YAML config");
  // Several -i (or a quoted glob) make a batch; take_single_input keeps one -i a single run.
  run.add_option("-i,--input", a.inputs, "Input file or - for stdin; repeat it, or quote a glob ('clips/*.mp4'), for a batch")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run.add_option("-o,--output", a.output,
                 "Output file or - for stdout; for a batch a pattern: {stem}, {name}, {ext}, {index} per input "
                 "('out/{stem}_pencil.mp4')");
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

void add_segment_arguments(CLI::App& command, stylepipe::TranscodeRequest& a) {
  command.add_option("--segments", a.segments, "Cut the input into this many segments at keyframes")
      ->check(CLI::Range(1, 100000));
  command.add_option("--segment-seconds", a.segment_seconds, "Cut the input every S seconds at keyframes")
      ->check(CLI::PositiveNumber);
  command.add_option("--workdir", a.workdir, "Where the manifest and segments go (default: OUTPUT.parts)");
}

void add_bench_arguments(CLI::App& bench, stylepipe::BenchRequest& a) {
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

void add_parallel_arguments(CLI::App& run, stylepipe::TranscodeRequest& a) {
  run.add_option("--manifest", a.manifest, "Run one segment of this plan (from `stylepipe plan`)");
  run.add_option("--index", a.index,
                 "The segment (default: SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX)")
      ->check(CLI::NonNegativeNumber);
  run.add_flag("--force", a.force, "Redo a segment that is already finished");
  run.add_option_function<std::string>(
         "--jobs",
         [&a](const std::string& value) {
           if (value == "auto") {
             a.jobs = stylepipe::TranscodeRequest::kJobsAuto;
             return;
           }
           try {
             size_t used = 0;
             a.jobs = std::stoi(value, &used);
             if (used == value.size() && a.jobs >= 1 && a.jobs <= 256) return;
           } catch (const std::exception&) {
           }
           throw CLI::ValidationError("--jobs", "'" + value + "' is not 1..256 or auto");
         },
         "Cut the input into segments and run this many workers at a time (a batch: this many clips at a time); "
         "auto: from the GPUs, the cores and the input's length, and of --devices only the GPUs the chain keeps busy")
      ->type_name("N|auto");
  run.add_option("--devices", a.devices, "GPUs the --jobs workers spread over: all, or a list like 0,1 (0,0: two on GPU 0)");
  run.add_flag("--keep-segments", a.keep_segments, "Keep the work directory after --jobs joined the output");
  run.add_flag("--worker-processes", a.worker_processes,
               "Run each --jobs worker as its own process, seeing only its GPU (a crash stays in its worker). "
               "Default: threads of this process, each on its GPU, sharing that device's context");
  run.add_flag("--fail-fast", a.fail_fast,
               "A batch: after a failed input start no other (running ones finish); by default the others go on");
  add_segment_arguments(run, a);
}

void take_single_input(stylepipe::TranscodeRequest& a) {
  if (a.inputs.size() != 1) return;
  a.input = a.inputs.front();
  a.inputs.clear();
}

void add_preview_arguments(CLI::App& preview, stylepipe::PreviewRequest& r) {
  // Not "config": CLI11 2.4 refuses a positional named like the --config option below.
  preview.add_option("CONFIG", r.config_path, "YAML config")->required();
  preview.add_option("-i,--input", r.input, "Input video or picture")->required();
  preview.add_option("-o,--output", r.output, "The contact sheet, a PNG file")->required();
  preview.add_option("--at", r.at_seconds, "Show the first frame at or after this time in seconds (default 0)")
      ->check(CLI::NonNegativeNumber);
  preview.add_option("--vary", r.variations,
                     "STAGE.PARAM=V1,V2,...: a row with one tile per value (repeatable; e.g. pencil.line_length=5,10,20)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  preview.add_option("--config", r.extra_configs, "Another config: one more tile in the first row (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  preview.add_option("--backend", r.backend, "auto|cuda|cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  preview.add_option("--font", r.font, "Font file of the labels (default: fontconfig's sans-serif)");
  preview.add_option("--layout-json", r.layout_json, "Also write each tile's rectangle and label as JSON");
  preview.add_flag("-y,--overwrite", r.overwrite, "Overwrite an existing sheet");
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

}  // namespace sp::cli
