#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "orchestration/bench.h"
#include "pipeline/config.h"
#include "orchestration/transcode.h"

namespace sp::cli {

struct RunArguments {
  std::string config_path, input, output;
  std::string input_format, input_pixel_format, input_size;
  std::optional<double> input_rate;
  std::string output_format, codec, preset, pixel_format;
  std::optional<int> crf;
  std::string backend = "auto";
  std::string hwdec = "auto";
  std::string encoder = "auto";
  bool overwrite = false;
  int64_t frames = -1;
  double start = 0, duration = -1;
  std::string stats_json, progress = "auto";
  bool quiet = false;
  std::optional<int> frames_in_flight, queue_depth;
  std::optional<int> threads;
  bool low_latency = false;
  std::string drop_policy = "block";
  // Segment-parallel runs
  std::string manifest;  // run one segment of this plan
  std::optional<int> index;
  bool force = false;
  int jobs = 0;  // > 0: plan, run this many workers at a time, concat
  std::string devices;
  std::optional<int> segments;
  std::optional<double> segment_seconds;
  std::string workdir;
  bool keep_segments = false;
  bool worker_processes = false;
};

struct BenchArguments {
  std::string config_path, input, size = "1920x1080", pixel_format = "yuv420p", backend = "auto", json_path;
  int frames = 300, warmup = 30, frames_in_flight = 3;
};

void add_run_arguments(CLI::App& run, RunArguments& a, std::string& log_level, bool& quiet);
// --segments, --segment-seconds, --workdir: for `plan` and `run --jobs`.
void add_segment_arguments(CLI::App& command, RunArguments& a);
void add_bench_arguments(CLI::App& bench, BenchArguments& a);

// Flags before `-i` describe the input, as in ffmpeg: `-f rawvideo --pix-fmt
// rgba --size 256x240 --rate 60 -i -`. Rewrites them to their --input-* names.
std::vector<std::string> position_dependent_input_flags(const std::vector<std::string>& args);

Size parse_size(const std::string& text, const std::string& flag);
PixelFormat parse_pixel_format(const std::string& text, const std::string& flag);

// Config defaults, overridden by command-line flags.
TranscodeOptions transcode_options(const RunArguments& a, const Config& config);
BenchOptions bench_options(const BenchArguments& a);

}  // namespace sp::cli
