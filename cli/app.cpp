#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "cli/arguments.h"
#include "cli/github_annotations.h"
#include "stylepipe/errors.h"
#include "stylepipe/session.h"
#include "stylepipe/tools.h"
#include "stylepipe/transcode.h"

namespace sp::cli {
namespace {

int validate_one(const std::string& path, const std::string& format) {
  try {
    const size_t stages = stylepipe::validate_config(path);
    std::printf("%s: ok (%zu stage%s)\n", path.c_str(), stages, stages == 1 ? "" : "s");
    return 0;
  } catch (const stylepipe::ConfigError& e) {
    if (format != "github") throw;
    // On stdout: the Actions runner reads workflow commands from there.
    std::printf("%s", github_annotations(e).c_str());
    return int(e.code());
  } catch (const stylepipe::Error& e) {
    if (format != "github") throw;
    // "PATH: error: cannot open config (...)": the annotation names the file already.
    std::string message = e.what();
    if (const std::string prefix = path + ": error: "; message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    std::printf("%s", github_annotation(path, std::nullopt, message).c_str());
    return int(e.code());
  }
}

// Every config is checked, so that one CI step reports all of them; the exit
// code is the first failure's (78 for a config error).
int cmd_validate(const std::vector<std::string>& paths, const std::string& format) {
  int status = 0;
  for (const std::string& path : paths) {
    int code = 0;
    try {
      code = validate_one(path, format);
    } catch (const stylepipe::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      code = int(e.code());
    }
    if (status == 0) status = code;
  }
  return status;
}

int cmd_schema() {
  std::printf("%s\n", stylepipe::config_json_schema().c_str());
  return 0;
}

int cmd_stages(bool json, bool markdown) {
  std::printf("%s", stylepipe::stages_reference(json ? "json" : markdown ? "markdown" : "text").c_str());
  return 0;
}

// The run's work is the library's; the CLI adds the signal handlers and the
// early teardown of the device, which only a process that exits next wants.
int cmd_run(stylepipe::TranscodeRequest request) {
  stylepipe::install_interrupt_handlers();
  stylepipe::allow_device_teardown();
  // The driver starts only the GPUs the run can use (cuInit took 0.19 s with
  // one GPU visible, 0.87 s with four, on a 4 x H200 host), and --jobs auto
  // uses only those its chain keeps busy.
  stylepipe::choose_auto_devices(request);
  stylepipe::restrict_cuda_devices(stylepipe::cuda_devices_named(request.devices));
  const int code = stylepipe::transcode(request);
  stylepipe::release_device_early();
  return code;
}

int cmd_plan(const stylepipe::TranscodeRequest& request) { return stylepipe::plan(request); }

int cmd_preview(const stylepipe::PreviewRequest& request) {
  stylepipe::restrict_cuda_devices(1);
  stylepipe::allow_device_teardown();
  const int code = stylepipe::preview(request);
  stylepipe::release_device_early();
  return code;
}

int cmd_bench(const stylepipe::BenchRequest& request) {
  stylepipe::restrict_cuda_devices(1);
  std::printf("%s", stylepipe::bench(request).c_str());
  return 0;
}

}  // namespace

int run_app(int argc, char** argv) {
  CLI::App app{"stylepipe: GPU video stylization pipeline", "stylepipe"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("stylepipe ") + stylepipe::kVersion + "\nbackends: " +
                                        stylepipe::build_backends());
  std::string log_level = "info";
  bool quiet = false;
  app.add_option("--log-level", log_level, "quiet|error|warning|info|debug")->check(CLI::IsMember({"quiet", "error", "warning", "info", "debug"}));
  app.add_flag("-q,--quiet", quiet, "Only errors");

  stylepipe::TranscodeRequest run_args;
  CLI::App* run = app.add_subcommand("run", "Transcode a video through a configured chain of stages");
  add_run_arguments(*run, run_args, log_level);
  add_parallel_arguments(*run, run_args);
  run->footer(
      "Exit codes: 0 done; 64 usage; 65 bad input data, or a batch (several -i, or an -o pattern) in which some "
      "inputs failed (each named on its own line, then `N of M inputs done, K failed`); 66 missing input; "
      "69 device unavailable; 70 internal; 74 I/O error; 78 config error; 130 interrupted.");

  stylepipe::TranscodeRequest plan_args;
  CLI::App* plan = app.add_subcommand("plan", "Cut an input into segments at keyframes: a manifest for workers");
  add_run_arguments(*plan, plan_args, log_level);
  add_segment_arguments(*plan, plan_args);

  std::string concat_manifest;
  bool concat_overwrite = false;
  CLI::App* concat = app.add_subcommand("concat", "Join the finished segments of a plan into its output");
  concat->add_option("manifest", concat_manifest, "The plan's manifest.json")->required();
  concat->add_flag("-y,--overwrite", concat_overwrite, "Overwrite an existing output");

  std::vector<std::string> validate_paths;
  std::string validate_format = "text";
  CLI::App* validate = app.add_subcommand("validate", "Check a config without touching any video");
  validate->add_option("configs", validate_paths, "YAML configs")->required();
  validate->add_option("--format", validate_format,
                       "text: file:line:col: error: lines on stderr; github: ::error workflow commands on stdout, "
                       "which annotate the config in a GitHub Actions job")
      ->check(CLI::IsMember({"text", "github"}));

  CLI::App* schema = app.add_subcommand(
      "schema", "Print the JSON Schema of config files (for editors: yaml-language-server), from the stages' tables");

  bool stages_json = false, stages_markdown = false;
  CLI::App* stages = app.add_subcommand("stages", "List every stage with its parameters");
  stages->add_flag("--json", stages_json, "Machine-readable schema");
  stages->add_flag("--markdown", stages_markdown, "The README's stage reference");

  stylepipe::BenchRequest bench_args;
  CLI::App* bench = app.add_subcommand("bench", "Time the chain and each stage");
  add_bench_arguments(*bench, bench_args);

  stylepipe::PreviewRequest preview_request;
  CLI::App* preview = app.add_subcommand("preview", "One frame through variants of a config: a labelled contact sheet (PNG)");
  add_preview_arguments(*preview, preview_request);

  std::vector<std::string> args(argv + 1, argv + argc);
  args = position_dependent_input_flags(args);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : int(stylepipe::ExitCode::usage);
  }
  if (quiet || run_args.quiet || plan_args.quiet) stylepipe::set_log_level("error");
  else stylepipe::set_log_level(log_level);
  run_args.log_level = plan_args.log_level = log_level;
  take_single_input(run_args);
  take_single_input(plan_args);

  try {
    if (*run) return cmd_run(run_args);
    if (*plan) return cmd_plan(plan_args);
    if (*concat) return stylepipe::concat(concat_manifest, concat_overwrite);
    if (*validate) return cmd_validate(validate_paths, validate_format);
    if (*schema) return cmd_schema();
    if (*stages) return cmd_stages(stages_json, stages_markdown);
    if (*bench) return cmd_bench(bench_args);
    if (*preview) return cmd_preview(preview_request);
  } catch (const stylepipe::Error& e) {
    // Config messages are already `file:line:col: error: ...` lines.
    if (e.code() == stylepipe::ExitCode::config || std::string(e.what()).find(": error: ") != std::string::npos)
      std::fprintf(stderr, "%s\n", e.what());
    else stylepipe::log_error(e.what());
    return int(e.code());
  } catch (const std::exception& e) {
    stylepipe::log_error(std::string("internal error: ") + e.what());
    return int(stylepipe::ExitCode::internal);
  }
  return int(stylepipe::ExitCode::usage);
}

}  // namespace sp::cli
