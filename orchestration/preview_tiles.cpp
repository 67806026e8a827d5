// The tiles of a preview: configs as they are, and --vary rows.
#include <fmt/format.h>

#include <filesystem>

#include "orchestration/preview.h"
#include "pipeline/errors.h"
#include "pipeline/stage.h"

namespace sp {
namespace {

std::vector<StageSpec> specs_of(const Config& config) {
  std::vector<StageSpec> specs;
  for (const StageConfig& s : config.stages) specs.push_back({s.name, s.params});
  return specs;
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// "5,10,[1,2,3]" -> "5", "10", "[1,2,3]": commas inside brackets belong to a list value.
std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> values;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      values.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  values.push_back(current);
  return values;
}

std::vector<PreviewTile> variation_row(const std::string& flag_value, const Config& config) {
  const std::string context = "--vary " + flag_value;
  auto fail = [&](const std::string& message) {
    throw Error(ExitCode::config, fmt::format("{}: error: {}", context, message));
  };
  const size_t eq = flag_value.find('=');
  const size_t dot = flag_value.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq)
    fail("write STAGE.PARAMETER=VALUE,VALUE,..., like pencil.line_length=5,10,20");
  const std::string stage = flag_value.substr(0, dot);
  const std::string param = flag_value.substr(dot + 1, eq - dot - 1);
  const std::vector<std::string> values = split_values(flag_value.substr(eq + 1));
  std::string stages_in_config;
  bool config_has_stage = false;
  for (const StageConfig& s : config.stages) {
    stages_in_config += (stages_in_config.empty() ? "" : ", ") + s.name;
    config_has_stage |= s.name == stage;
  }
  std::vector<PreviewTile> row;
  for (const std::string& value : values) {
    if (value.empty()) fail("an empty value; separate values by single commas, like " + stage + "." + param + "=5,10");
    if (!config_has_stage) {
      // The table's own errors first (unknown stage or parameter, a bad value), as for a stage in the config.
      const StageDescriptor* desc = StageRegistry::instance().find(stage);
      set_param_from_text(stage, desc ? default_params(desc->params) : Params{}, param, value, context);
      fail(fmt::format("{} has no stage '{}' (its stages: {})", file_name(config.path), stage, stages_in_config));
    }
    PreviewTile tile;
    tile.label = stage + "." + param + "=" + value;
    for (const StageConfig& s : config.stages)
      tile.stages.push_back({s.name, s.name == stage ? set_param_from_text(stage, s.params, param, value, context)
                                                      : s.params});
    row.push_back(std::move(tile));
  }
  return row;
}

}  // namespace

std::vector<std::vector<PreviewTile>> plan_preview_tiles(const PreviewRequest& request) {
  const Config config = load_config(request.config_path);
  std::vector<PreviewTile> first_row = {{"original", {}}, {file_name(request.config_path), specs_of(config)}};
  for (const std::string& path : request.extra_configs) first_row.push_back({file_name(path), specs_of(load_config(path))});
  std::vector<std::vector<PreviewTile>> rows = {first_row};
  for (const std::string& v : request.variations) rows.push_back(variation_row(v, config));
  return rows;
}

}  // namespace sp
