#pragma once
// The CLI's flags, bound to the public API's requests.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "stylepipe/tools.h"
#include "stylepipe/transcode.h"

namespace sp::cli {

void add_run_arguments(CLI::App& run, stylepipe::TranscodeRequest& a, std::string& log_level);
// --segments, --segment-seconds, --workdir: for `plan` and `run --jobs`.
void add_segment_arguments(CLI::App& command, stylepipe::TranscodeRequest& a);
// --manifest, --index, --force, --jobs, --devices, --keep-segments on `run`.
void add_parallel_arguments(CLI::App& run, stylepipe::TranscodeRequest& a);
// One -i is a single run's `input`; several stay in `inputs`, a batch.
void take_single_input(stylepipe::TranscodeRequest& a);
void add_bench_arguments(CLI::App& bench, stylepipe::BenchRequest& a);
void add_preview_arguments(CLI::App& preview, stylepipe::PreviewRequest& r);

// Flags before `-i` describe the input, as in ffmpeg: `-f rawvideo --pix-fmt
// rgba --size 256x240 --rate 60 -i -`. Rewrites them to their --input-* names.
std::vector<std::string> position_dependent_input_flags(const std::vector<std::string>& args);

}  // namespace sp::cli
