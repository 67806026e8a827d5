#pragma once
// The CLI of segment-parallel runs: `plan`, `run --manifest`, `run --jobs`, `concat`.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/arguments.h"

namespace sp::cli {

// --manifest, --index, --force, --jobs, --devices, --keep-segments on `run`.
void add_parallel_arguments(CLI::App& run, RunArguments& a);

int cmd_plan(const RunArguments& a);
int cmd_run_segment(const RunArguments& a);
int cmd_run_parallel(const RunArguments& a, const std::string& log_level);
int cmd_concat(const std::string& manifest_path, bool overwrite);

// `run` without --manifest needs CONFIG, -i and -o; with it, none of them.
void check_run_arguments(const RunArguments& a);

}  // namespace sp::cli
