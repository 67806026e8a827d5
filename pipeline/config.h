#pragma once
#include <optional>
#include <string>
#include <vector>

#include "pipeline/errors.h"
#include "pipeline/params.h"

namespace sp {

// One entry of the `pipeline:` list, validated against its stage's table.
struct StageConfig {
  std::string name;
  Params params;  // every key of the table; given() marks what the user wrote
  int line = 0, column = 0;  // 1-based position of the stage name in the file
};

// `output:` — defaults for the encoder; command-line flags override them.
struct OutputDefaults {
  std::optional<std::string> codec, preset, pixel_format, format;
  std::optional<int> crf;
};

// `settings:`
struct PipelineSettings {
  int frames_in_flight = 3;  // 1..16
  int queue_depth = 4;       // 1..64
};

struct Config {
  std::string path;  // as the user gave it
  std::string text;  // the file as it was read and checked: a plan keeps this, not a second read
  std::vector<StageConfig> stages;
  OutputDefaults output;
  PipelineSettings settings;
};

// One problem in a config file, at a 1-based line and column. The message is
// one line (control characters in quoted names are escaped).
struct ConfigProblem {
  int line = 1, column = 1;
  std::string message;
};

// What load_config and parse_config throw for problems in the file: what() is
// the `path:line:col: error: ...` lines, problems() the same problems for
// other renderings (`stylepipe validate --format github`).
class ConfigErrors : public Error {
 public:
  ConfigErrors(std::string path, std::vector<ConfigProblem> problems, const std::string& rendered)
      : Error(ExitCode::config, rendered), path_(std::move(path)), problems_(std::move(problems)) {}
  const std::string& path() const { return path_; }
  const std::vector<ConfigProblem>& problems() const { return problems_; }

 private:
  std::string path_;
  std::vector<ConfigProblem> problems_;
};

// Reads and validates a config. Every problem in the file is collected and
// reported at once: sp::ConfigErrors (exit code 78) whose message is one line per
// problem, `path:line:col: error: ...`, in file order. A file that cannot be
// read gives sp::Error(ExitCode::no_input, "path: error: cannot open config (...)").
Config load_config(const std::string& path);

// Same, from text; `display_path` prefixes the messages.
Config parse_config(const std::string& yaml_text, const std::string& display_path);

// One parameter set from text outside a config file (`--vary pencil.line_length=9`):
// `value_text` is read as a YAML scalar or flow list and checked like the same
// value in a config (type, range, choices, then the stage's cross-parameter
// rules on `base` with it). Returns `base` with the value set and marked given.
// Throws sp::Error(ExitCode::config, "CONTEXT: error: MESSAGE"), one line, with
// the config loader's wording (unknown stage or parameter with a "did you mean").
Params set_param_from_text(const std::string& stage, const Params& base, const std::string& param,
                           const std::string& value_text, const std::string& context);

// The tables of the `output:` and `settings:` sections. Like the stage tables
// they drive validation, the JSON schema and the docs.
const std::vector<ParamSpec>& output_param_table();
const std::vector<ParamSpec>& settings_param_table();
// What the loader checks of the `output:` fields beyond their table.
const std::vector<ParamRule>& output_rules();

// The closest of `candidates` to `word` by edit distance (adjacent swaps count
// as one edit), or "" when none is close enough to be a plausible typo.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace sp
