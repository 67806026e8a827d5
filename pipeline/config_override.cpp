// Parameter values given on the command line (stylepipe preview --vary), read
// through the same conversion and checks as a config file's values.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "pipeline/config.h"
#include "pipeline/config_values.h"
#include "pipeline/errors.h"
#include "pipeline/stage.h"

namespace sp {
namespace {

[[noreturn]] void fail(const std::string& context, const std::string& message) {
  throw Error(ExitCode::config, fmt::format("{}: error: {}", context, message));
}

std::string hint_for(const std::string& word, const std::vector<std::string>& known, const std::string& fallback) {
  const std::string near = closest_match(word, known);
  return near.empty() ? fallback : "did you mean '" + near + "'?";
}

}  // namespace

Params set_param_from_text(const std::string& stage, const Params& base, const std::string& param,
                           const std::string& value_text, const std::string& context) {
  const StageDescriptor* desc = StageRegistry::instance().find(stage);
  if (!desc) {
    std::vector<std::string> known;
    for (const StageDescriptor* d : StageRegistry::instance().all()) known.push_back(d->name);
    fail(context, fmt::format("stage '{}' is unknown ({})", stage, hint_for(stage, known, "'stylepipe stages' lists them")));
  }
  const ParamSpec* spec = nullptr;
  std::vector<std::string> names;
  for (const ParamSpec& p : desc->params) {
    names.push_back(p.name);
    if (p.name == param) spec = &p;
  }
  if (!spec) {
    std::string all;
    for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
    fail(context, fmt::format("stage '{}' has no parameter '{}' ({})", stage, param,
                              hint_for(param, names, "its parameters: " + all)));
  }
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::Exception& e) {
    fail(context, fmt::format("value '{}' is not YAML: {}", value_text, e.msg));
  }
  config_detail::Diagnostics diag;
  const YAML::Node key(param);
  auto converted = config_detail::convert_value(
      *spec, key, value, config_detail::param_subject("parameter", param, fmt::format("stage '{}'", stage)), diag);
  if (!converted) fail(context, diag.list().empty() ? "invalid value" : diag.list().front().message);
  Params params = base;
  params.set(param, std::move(*converted));
  if (!value.IsNull()) params.mark_given(param);
  if (desc->validate) {
    std::optional<std::string> problem;
    try {
      problem = desc->validate(params);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (problem) fail(context, fmt::format("stage '{}': {}", stage, *problem));
  }
  return params;
}

}  // namespace sp
