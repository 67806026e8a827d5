#include "pipeline/stage_docs.h"

#include <fmt/format.h>

#include <algorithm>

#include "pipeline/config.h"
#include "pipeline/stage.h"

namespace sp {
namespace {

struct Section {
  std::string name, summary;
  const std::vector<ParamSpec>* params;
  const std::vector<ParamRule>* rules;
};

std::vector<Section> config_sections() {
  static const std::vector<ParamRule> no_rules;
  return {{"output", "Encoder defaults of the `output:` config section; command-line flags override them.",
           &output_param_table(), &output_rules()},
          {"settings", "Pipeline settings of the `settings:` config section.", &settings_param_table(), &no_rules}};
}

// "scale.factor_positive: factor is greater than 0." lines of what only
// `stylepipe validate` checks, for descriptions and docs.
std::string rules_text(const std::string& owner, const std::vector<ParamRule>& rules, const char* prefix) {
  std::string out;
  for (const ParamRule& r : rules) out += fmt::format("{}{}.{}: {}\n", prefix, owner, r.name, r.text);
  return out;
}

const char* const kRulesHeading = "Checked by `stylepipe validate`, not by this schema:";

std::string bound_text(const ParamSpec& p, double v) {
  if (p.type == ParamType::integer) return fmt::format("{}", int64_t(v));
  return format_value(ParamValue{v});
}

std::string range_text(const ParamSpec& p, const char* range_sep) {
  switch (p.type) {
    case ParamType::boolean: return "true|false";
    case ParamType::string: return "";
    case ParamType::choice: {
      std::string s;
      for (size_t i = 0; i < p.choices.size(); ++i) s += (i ? "|" : "") + p.choices[i];
      return s;
    }
    default: break;
  }
  std::string r;
  if (p.min && p.max) r = bound_text(p, *p.min) + range_sep + bound_text(p, *p.max);
  else if (p.min) r = ">= " + bound_text(p, *p.min);
  else if (p.max) r = "<= " + bound_text(p, *p.max);
  if (p.type == ParamType::number_list) return r.empty() ? "numbers" : "numbers in " + r;
  return r;
}

std::string default_text(const ParamSpec& p) {
  if (p.optional_default) return "auto";
  if (p.type == ParamType::string && std::get<std::string>(p.default_value).empty()) return "\"\"";
  return format_value(p.default_value);
}

nlohmann::json value_json(const ParamValue& v) {
  switch (v.index()) {
    case 0: return std::get<bool>(v);
    case 1: return std::get<int64_t>(v);
    case 2: return std::get<double>(v);
    case 3: return std::get<std::string>(v);
    default: return std::get<std::vector<double>>(v);
  }
}

nlohmann::json param_json(const ParamSpec& p) {
  nlohmann::json j = {{"name", p.name},
                      {"type", to_string(p.type)},
                      {"default", value_json(p.default_value)},
                      {"auto", p.optional_default},
                      {"doc", p.doc}};
  if (p.min) j["min"] = p.type == ParamType::integer ? nlohmann::json(int64_t(*p.min)) : nlohmann::json(*p.min);
  if (p.max) j["max"] = p.type == ParamType::integer ? nlohmann::json(int64_t(*p.max)) : nlohmann::json(*p.max);
  if (p.type == ParamType::choice) j["choices"] = p.choices;
  return j;
}

nlohmann::json bounds_schema(const ParamSpec& p, nlohmann::json s) {
  const bool integer = p.type == ParamType::integer;
  if (p.min) s["minimum"] = integer ? nlohmann::json(int64_t(*p.min)) : nlohmann::json(*p.min);
  if (p.max) s["maximum"] = integer ? nlohmann::json(int64_t(*p.max)) : nlohmann::json(*p.max);
  return s;
}

nlohmann::json param_schema(const ParamSpec& p) {
  nlohmann::json s;
  switch (p.type) {
    case ParamType::boolean: s = {{"type", "boolean"}}; break;
    case ParamType::integer: s = bounds_schema(p, {{"type", "integer"}}); break;
    case ParamType::number: s = bounds_schema(p, {{"type", "number"}}); break;
    // The loader takes any scalar as text (an unquoted 264 is the codec "264").
    case ParamType::string: s = {{"type", {"string", "number", "boolean"}}}; break;
    case ParamType::choice: s = {{"type", "string"}, {"enum", p.choices}}; break;
    case ParamType::number_list:
      s = {{"type", "array"}, {"items", bounds_schema(p, {{"type", "number"}})}};
      break;
  }
  // The loader reads an explicit null of an "auto" parameter as its default,
  // so null is what an editor should offer as the default of one.
  if (p.optional_default) {
    nlohmann::json types = s["type"].is_array() ? s["type"] : nlohmann::json::array({s["type"]});
    types.push_back("null");
    s["type"] = types;
    s["default"] = nullptr;
  } else {
    s["default"] = value_json(p.default_value);
  }
  s["description"] = p.doc;
  return s;
}

nlohmann::json map_schema(const std::vector<ParamSpec>& params, const std::string& owner, std::string description,
                          const std::vector<ParamRule>& rules) {
  if (!rules.empty()) description += fmt::format("\n\n{}\n{}", kRulesHeading, rules_text(owner, rules, "- "));
  nlohmann::json props = nlohmann::json::object();
  for (const ParamSpec& p : params) props[p.name] = param_schema(p);
  // null: `scale:` or `scale: ~` asks for all defaults.
  return {{"type", nlohmann::json::array({"object", "null"})},
          {"description", description},
          {"additionalProperties", false},
          {"properties", props}};
}

// Text cells of one parameter row: name, type, default, range, doc.
std::vector<std::string> row_cells(const ParamSpec& p, const char* range_sep) {
  return {p.name, to_string(p.type), default_text(p), range_text(p, range_sep), p.doc};
}

std::string text_table(const std::vector<ParamSpec>& params) {
  if (params.empty()) return "    (no parameters)\n";
  std::vector<std::vector<std::string>> rows = {{"name", "type", "default", "range/choices", "doc"}};
  for (const ParamSpec& p : params) rows.push_back(row_cells(p, ".."));
  // A very long cell (a long list of choices) overflows its column rather
  // than pushing every doc of the stage far to the right.
  const size_t widest_column = 28;
  size_t width[4] = {0, 0, 0, 0};
  for (const auto& r : rows)
    for (size_t c = 0; c < 4; ++c)
      if (r[c].size() <= widest_column) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const auto& r : rows) {
    out += "    ";
    for (size_t c = 0; c < 4; ++c) out += fmt::format("{:<{}}  ", r[c], width[c]);
    out += r[4];
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string markdown_table(const std::vector<ParamSpec>& params) {
  if (params.empty()) return "No parameters.\n";
  std::string out = "| parameter | type | default | range / choices | description |\n| --- | --- | --- | --- | --- |\n";
  for (const ParamSpec& p : params) {
    auto cells = row_cells(p, " .. ");
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", cells[0], cells[1], markdown_cell(cells[2]),
                       markdown_cell(cells[3]), markdown_cell(cells[4]));
  }
  return out;
}

// The rules beyond the table, named as the schema's description names them.
std::string markdown_rules(const std::string& owner, const std::vector<ParamRule>& rules) {
  if (rules.empty()) return "";
  std::string out = "Also checked by `stylepipe validate`, not by the JSON schema:\n\n";
  for (const ParamRule& r : rules) out += fmt::format("- `{}.{}`: {}\n", owner, r.name, markdown_cell(r.text));
  return out + "\n";
}

}  // namespace

std::string stages_text() {
  std::string out;
  for (const StageDescriptor* d : StageRegistry::instance().all()) {
    out += fmt::format("{}: {}\n", d->name, d->summary);
    out += text_table(d->params);
    out += rules_text(d->name, d->rules, "    also checked: ");
    out += '\n';
  }
  for (const Section& s : config_sections()) {
    out += fmt::format("[{}] {}\n", s.name, s.summary);
    out += text_table(*s.params);
    out += '\n';
  }
  return out;
}

nlohmann::json config_json_schema() {
  nlohmann::json stage_maps = nlohmann::json::object();
  std::string rules = std::string(kRulesHeading) + "\n";
  for (const StageDescriptor* d : StageRegistry::instance().all()) {
    stage_maps[d->name] = map_schema(d->params, d->name, d->summary, d->rules);
    rules += rules_text(d->name, d->rules, "- ");
  }
  nlohmann::json schema = {
      // Draft-07: the newest draft yaml-language-server (editors) checks; python3-jsonschema reads it too.
      {"$schema", "http://json-schema.org/draft-07/schema#"},
      {"title", "stylepipe config"},
      {"type", "object"},
      {"required", {"pipeline"}},
      {"additionalProperties", false},
      {"properties",
       {{"pipeline",
         {{"type", "array"},
          {"description", "The chain of stages, run in order; each entry is a one-key map: stage name -> parameters."},
          {"minItems", 1},
          // One map per stage whose single key names it: editors complete the stage names.
          {"items",
           {{"type", "object"},
            {"minProperties", 1},
            {"maxProperties", 1},
            {"additionalProperties", false},
            {"properties", stage_maps}}}}}}}};
  for (const Section& s : config_sections()) {
    schema["properties"][s.name] = map_schema(*s.params, s.name, s.summary, *s.rules);
    rules += rules_text(s.name, *s.rules, "- ");
  }
  schema["description"] = fmt::format(
      "A stylepipe config (generated by `stylepipe schema` from the parameter tables).\n\n{}"
      "Keys given twice are errors too (YAML parsers report them), and so is a fraction part on an integer "
      "parameter (2.0), which JSON Schema counts as the integer 2.",
      rules);
  return schema;
}

nlohmann::json stages_schema_json() {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageDescriptor* d : StageRegistry::instance().all()) {
    nlohmann::json params = nlohmann::json::array();
    for (const ParamSpec& p : d->params) params.push_back(param_json(p));
    stages.push_back({{"name", d->name}, {"summary", d->summary}, {"params", params}});
  }
  nlohmann::json j = {{"version", 1}, {"stages", stages}};
  for (const Section& s : config_sections()) {
    nlohmann::json fields = nlohmann::json::array();
    for (const ParamSpec& p : *s.params) fields.push_back(param_json(p));
    j[s.name] = fields;
  }
  j["config_schema"] = config_json_schema();
  return j;
}

std::string stages_markdown() {
  std::string out = "<!-- Generated by `stylepipe stages --markdown` from the stages' parameter tables. -->\n\n";
  for (const StageDescriptor* d : StageRegistry::instance().all()) {
    out += fmt::format("### `{}`\n\n{}\n\n", d->name, markdown_cell(d->summary));
    out += markdown_table(d->params);
    out += '\n';
    out += markdown_rules(d->name, d->rules);
  }
  for (const Section& s : config_sections()) {
    out += fmt::format("### `{}:` (config section)\n\n{}\n\n", s.name, s.summary);
    out += markdown_table(*s.params);
    out += '\n';
    out += markdown_rules(s.name, *s.rules);
  }
  return out;
}

}  // namespace sp
