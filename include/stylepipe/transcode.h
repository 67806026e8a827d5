#pragma once
// A transcode: decode an input, run a config's chain on every frame, encode,
// keeping audio, subtitles, timestamps and metadata. This is the CLI's `run`
// (`stylepipe run --help` documents each field under its flag's name).
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stylepipe {

struct TranscodeProgress {
  int64_t frames = 0;          // written so far
  double media_seconds = 0.0;  // of the input, done so far
};

struct TranscodeRequest {
  std::string config_path, input, output;
  // A batch: more inputs after `input` (either may be a glob, 'clips/*.mp4',
  // expanded in byte order), and `output` a pattern filled in per input:
  // {stem}, {name}, {ext}, {index} (0-based). Each clip is a whole single run
  // in this process; `jobs` runs that many clips at a time. An output with a
  // placeholder makes a batch of one input too.
  std::vector<std::string> inputs;
  bool fail_fast = false;  // a batch: after a failed clip, start no other
  // The input (raw video, devices): --input-format, --input-pix-fmt, --input-size WxH, --input-rate.
  std::string input_format, input_pixel_format, input_size;
  std::optional<double> input_rate;
  // The output: empty fields take the config's `output:` section.
  std::string output_format, codec, preset, pixel_format;
  std::optional<int> crf;
  std::string backend = "auto";  // auto | cuda | cpu
  std::string hwdec = "auto";    // auto | nvdec | none
  std::string encoder = "auto";  // auto | nvenc | software
  bool overwrite = false;
  int64_t frames = -1;  // stop after this many (-1: all)
  double start = 0, duration = -1;
  std::string stats_json;         // where to write the run's statistics
  std::string progress = "auto";  // auto | tty | plain | json | none: what is printed on stderr
  bool quiet = false;
  std::optional<int> frames_in_flight, queue_depth, threads;
  bool low_latency = false;
  std::string drop_policy = "block";  // block | drop-oldest

  // Segment-parallel runs: `jobs` workers over `devices` ("all", "0,1"), or
  // one segment (`manifest`, `index`) of a plan. kJobsAuto: chosen from the
  // GPUs, the cores and the input's length (a single run where one worker is
  // enough), and said in one line.
  static constexpr int kJobsAuto = -1;
  int jobs = 0;
  std::string devices;
  std::optional<int> segments;
  std::optional<double> segment_seconds;
  std::string workdir;
  bool keep_segments = false;
  bool worker_processes = false;
  std::string manifest;
  std::optional<int> index;
  bool force = false;
  std::string log_level = "info";  // what --jobs gives its worker processes
  // Set by choose_auto_devices where `--jobs auto` left some of `devices`
  // out: why (its log line, and `jobs_auto.devices_reason` in --stats-json).
  std::string devices_auto_reason;

  // Called from the calling thread's side of the run about every 100 ms
  // while frames are written (single runs; --jobs sums its workers).
  std::function<void(const TranscodeProgress&)> on_progress;
  // Set it (from any thread) to stop: the output is finished with what was
  // written, and transcode returns ExitCode::interrupted.
  const std::atomic<bool>* cancel = nullptr;
};

// Checks the request and every config problem before any work, then runs
// it. Returns the exit code (0, or interrupted); throws stylepipe::Error for
// failures before any output was opened. A batch checks every output first,
// reports each failed clip and goes on, and returns data_error (65) when
// some clip failed.
int transcode(const TranscodeRequest& request);

// `--jobs auto` over several GPUs (`devices` "all" or a list): the first of
// them that the chain keeps busy, where the chain's GPU time and a software
// encoder (libx264, libx265) are known without starting CUDA; `devices` is
// narrowed to them and the reason logged once. Leaves any other request as
// it is. transcode() does it too; a front end that restricts the GPUs CUDA
// starts (restrict_cuda_devices) calls it first, so that the driver starts
// only these.
void choose_auto_devices(TranscodeRequest& request);

// `stylepipe plan`: cuts the input into segments at keyframes and writes
// the manifest that `manifest`/`index` runs and `concat` read; prints it.
int plan(const TranscodeRequest& request);
// `stylepipe concat`: joins a plan's finished segments into its output.
int concat(const std::string& manifest_path, bool overwrite);

// SIGINT and SIGTERM stop a running transcode cleanly (the CLI's handlers;
// a library caller uses TranscodeRequest::cancel instead).
void install_interrupt_handlers();

}  // namespace stylepipe
