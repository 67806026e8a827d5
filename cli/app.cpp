#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli/arguments.h"
#include "cli/github_annotations.h"
#include "cli/preview_command.h"
#include "cli/segment_commands.h"
#include "orchestration/bench.h"
#include "pipeline/config.h"
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"
#include "pipeline/stage_docs.h"
#include "orchestration/transcode.h"

namespace sp::cli {
namespace {

std::vector<StageSpec> stage_specs(const Config& config) {
  std::vector<StageSpec> specs;
  for (const auto& s : config.stages) specs.push_back({s.name, s.params});
  return specs;
}

int validate_one(const std::string& path, const std::string& format) {
  try {
    const Config config = load_config(path);
    std::printf("%s: ok (%zu stage%s)\n", path.c_str(), config.stages.size(), config.stages.size() == 1 ? "" : "s");
    return 0;
  } catch (const ConfigErrors& e) {
    if (format != "github") throw;
    // On stdout: the Actions runner reads workflow commands from there.
    std::printf("%s", github_annotations(e).c_str());
    return int(e.code());
  } catch (const Error& e) {
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
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      code = int(e.code());
    }
    if (status == 0) status = code;
  }
  return status;
}

int cmd_schema() {
  std::printf("%s\n", config_json_schema().dump(2).c_str());
  return 0;
}

int cmd_stages(bool json, bool markdown) {
  if (json) std::printf("%s\n", stages_schema_json().dump(2).c_str());
  else if (markdown) std::printf("%s", stages_markdown().c_str());
  else std::printf("%s", stages_text().c_str());
  return 0;
}

int cmd_run(const RunArguments& a) {
  const Config config = load_config(a.config_path);  // every config error before any work
  TranscodeOptions o = transcode_options(a, config);
  o.stages = stage_specs(config);
  install_interrupt_handlers();
  RunStats stats;
  const int code = run_transcode(o, stats);
  log_debug("done");
  release_cuda_context();
  log_debug("exiting with {}", code);
  return code;
}

int cmd_bench(const BenchArguments& a) {
  BenchOptions o = bench_options(a);
  if (!a.config_path.empty()) o.stages = stage_specs(load_config(a.config_path));
  const nlohmann::json report = run_bench(o);
  std::printf("%s", bench_table(report).c_str());
  if (!a.json_path.empty()) {
    std::ofstream out(a.json_path);
    out << report.dump(2) << "\n";
    if (!out) throw Error(ExitCode::io_error, a.json_path + ": cannot write the bench report");
  }
  return 0;
}

}  // namespace

int run_app(int argc, char** argv) {
  CLI::App app{"stylepipe: GPU video stylization pipeline", "stylepipe"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("stylepipe 0.1.0\nbackends: ") + kBuildBackends);
  std::string log_level = "info";
  bool quiet = false;
  app.add_option("--log-level", log_level, "quiet|error|warning|info|debug")->check(CLI::IsMember({"quiet", "error", "warning", "info", "debug"}));
  app.add_flag("-q,--quiet", quiet, "Only errors");

  RunArguments run_args;
  CLI::App* run = app.add_subcommand("run", "Transcode a video through a configured chain of stages");
  add_run_arguments(*run, run_args, log_level, quiet);
  add_parallel_arguments(*run, run_args);

  RunArguments plan_args;
  CLI::App* plan = app.add_subcommand("plan", "Cut an input into segments at keyframes: a manifest for workers");
  add_run_arguments(*plan, plan_args, log_level, quiet);
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

  BenchArguments bench_args;
  CLI::App* bench = app.add_subcommand("bench", "Time the chain and each stage");
  add_bench_arguments(*bench, bench_args);

  PreviewRequest preview_request;
  CLI::App* preview = app.add_subcommand("preview", "One frame through variants of a config: a labelled contact sheet (PNG)");
  add_preview_arguments(*preview, preview_request);

  std::vector<std::string> args(argv + 1, argv + argc);
  args = position_dependent_input_flags(args);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : int(ExitCode::usage);
  }
  LogLevel level = LogLevel::info;
  parse_log_level(log_level, &level);
  if (quiet || run_args.quiet || plan_args.quiet) level = LogLevel::error;
  set_log_level(level);

  try {
    if (*run) {
      check_run_arguments(run_args);
      if (!run_args.manifest.empty()) return cmd_run_segment(run_args);
      if (run_args.jobs > 0) return cmd_run_parallel(run_args, log_level);
      return cmd_run(run_args);
    }
    if (*plan) {
      if (plan_args.config_path.empty() || plan_args.input.empty() || plan_args.output.empty())
        throw Error(ExitCode::usage, "plan needs CONFIG, -i INPUT and -o OUTPUT");
      return cmd_plan(plan_args);
    }
    if (*concat) return cmd_concat(concat_manifest, concat_overwrite);
    if (*validate) return cmd_validate(validate_paths, validate_format);
    if (*schema) return cmd_schema();
    if (*stages) return cmd_stages(stages_json, stages_markdown);
    if (*bench) return cmd_bench(bench_args);
    if (*preview) return cmd_preview(preview_request);
  } catch (const Error& e) {
    // Config messages are already `file:line:col: error: ...` lines.
    if (e.code() == ExitCode::config || std::string(e.what()).find(": error: ") != std::string::npos)
      std::fprintf(stderr, "%s\n", e.what());
    else log_error("{}", e.what());
    return int(e.code());
  } catch (const std::exception& e) {
    log_error("internal error: {}", e.what());
    return int(ExitCode::internal);
  }
  return int(ExitCode::usage);
}

}  // namespace sp::cli
