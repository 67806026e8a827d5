#include "pipeline/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstring>
#include <functional>
#include <filesystem>
#include <map>
#include <variant>

#include "pipeline/config_values.h"
#include "pipeline/errors.h"
#include "pipeline/stage.h"
#include "pipeline/whole_file.h"

namespace sp {

const std::vector<ParamSpec>& output_param_table() {
  static const std::vector<ParamSpec> table = {
      {"codec", ParamType::string, std::string(""), {}, {}, {},
       "Video encoder, an FFmpeg encoder name (libx264, ffv1, png, rawvideo, ...). Default: chosen from the output's "
       "extension.",
       true},
      {"crf", ParamType::integer, int64_t(18), 0, 51, {}, "Constant rate factor for libx264: 0 is lossless, 51 worst."},
      {"preset", ParamType::choice, std::string("medium"), {}, {},
       {"ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"},
       "libx264 speed/size trade-off."},
      {"pixel_format", ParamType::string, std::string(""), {}, {}, {},
       "Encoder pixel format, an FFmpeg name (yuv420p, yuv444p, rgb24, gray, ...). Default: the encoder's format "
       "closest to the input.",
       true},
      {"format", ParamType::string, std::string(""), {}, {}, {},
       "Container format, an FFmpeg muxer name (mp4, matroska, nut, image2, ...). Default: from the output's "
       "extension.",
       true},
  };
  return table;
}

const std::vector<ParamSpec>& settings_param_table() {
  static const std::vector<ParamSpec> table = {
      {"frames_in_flight", ParamType::integer, int64_t(3), 1, 16, {},
       "Frames processed concurrently on the GPU, each on its own CUDA stream."},
      {"queue_depth", ParamType::integer, int64_t(4), 1, 64, {},
       "Capacity of the queues between reader, processor and writer."},
  };
  return table;
}

const std::vector<ParamRule>& output_rules() {
  static const std::vector<ParamRule> rules = {
      {"ffmpeg_names",
       "codec, pixel_format and format name a video encoder, a pixel format and a muxer of the FFmpeg libraries "
       "stylepipe runs with (they differ between builds)."},
  };
  return rules;
}

namespace {
using config_detail::convert_value;
using config_detail::describe;
using config_detail::Diagnostics;
using config_detail::param_subject;
using config_detail::position_text;

// Visits the entries of a map in file order. Non-scalar keys and repeated keys
// are reported and skipped: yaml-cpp keeps both copies of a repeated key.
void for_each_entry(const YAML::Node& map, Diagnostics& diag,
                    const std::function<void(const YAML::Node& key, const YAML::Node& value)>& fn) {
  std::map<std::string, YAML::Mark> seen;
  for (const auto& entry : map) {  // iterator-> returns a temporary proxy: bind *it instead
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      diag.add(key.Mark(), fmt::format("a key must be a plain name (got {})", describe(key)));
      continue;
    }
    auto [prev, inserted] = seen.emplace(key.Scalar(), key.Mark());
    if (!inserted) {
      diag.add(key.Mark(),
               fmt::format("duplicate key '{}' (first given at {})", key.Scalar(), position_text(prev->second)));
      continue;
    }
    fn(key, entry.second);
  }
}

std::vector<std::string> names_of(const std::vector<ParamSpec>& table) {
  std::vector<std::string> names;
  for (const ParamSpec& p : table) names.push_back(p.name);
  return names;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

// A map of parameters checked against `table`: the params of one stage, or
// the `output:` / `settings:` fields. `owner` names the map in messages
// ("stage 'scale'", "'output'"), `item_word` its entries ("parameter", "field").
struct Section {
  const std::vector<ParamSpec>& table;
  std::string owner, item_word;
};

// Fills `out` (defaults first, then what the file gives). `value_nodes`
// receives the node of each given entry, for later messages. Returns false
// when anything was reported.
bool read_section(const Section& section, const YAML::Node& node, Diagnostics& diag,
                  Params& out, std::map<std::string, YAML::Node>* value_nodes) {
  out = default_params(section.table);
  if (node.IsNull()) return true;  // `scale:` or `scale: ~` means all defaults
  const size_t before = diag.count();
  if (!node.IsMap()) {
    // Show a parameter with a real default ("auto" ones have none worth writing).
    std::string example = "{}";
    for (const ParamSpec& p : section.table)
      if (!p.optional_default) {
        example = fmt::format("{{{}: {}}}", p.name, format_value(p.default_value));
        break;
      }
    diag.add(node.Mark(), fmt::format("{} takes a map of {}s like {} (got {})", section.owner, section.item_word,
                                      example, describe(node)));
    return false;
  }
  for_each_entry(node, diag, [&](const YAML::Node& k, const YAML::Node& v) {
    const std::string& name = k.Scalar();
    const ParamSpec* spec = nullptr;
    for (const ParamSpec& p : section.table)
      if (p.name == name) spec = &p;
    if (!spec) {
      const std::vector<std::string> names = names_of(section.table);
      std::string hint;
      if (std::string near = closest_match(name, names); !near.empty()) hint = "did you mean '" + near + "'?";
      else if (names.empty()) hint = "it takes no " + section.item_word + "s";
      else hint = "its " + section.item_word + "s: " + join(names);
      diag.add(k.Mark(), fmt::format("{} has no {} '{}' ({})", section.owner, section.item_word, name, hint));
      return;
    }
    auto value = convert_value(*spec, k, v, param_subject(section.item_word, name, section.owner), diag);
    if (!value) return;
    out.set(name, std::move(*value));
    // An explicit null for an "auto" parameter asks for the default: not given.
    if (!v.IsNull()) out.mark_given(name);
    if (value_nodes) (*value_nodes)[name] = v.IsNull() ? k : v;
  });
  return diag.count() == before;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where a stage's cross-parameter check points: the given parameter its
// message names first, else the stage name.
YAML::Mark locate_validate_message(const std::string& message, const std::map<std::string, YAML::Node>& given,
                                   const YAML::Mark& fallback) {
  size_t best = std::string::npos;
  YAML::Mark mark = fallback;
  for (const auto& [name, node] : given) {
    for (size_t at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
      const bool starts = at == 0 || !is_word_char(message[at - 1]);
      const size_t end = at + name.size();
      const bool ends = end == message.size() || !is_word_char(message[end]);
      if (starts && ends) {
        if (at < best) best = at, mark = node.Mark();
        break;
      }
    }
  }
  return mark;
}

void read_stage(const YAML::Node& key, const YAML::Node& value, Diagnostics& diag, Config& config) {
  const std::string& name = key.Scalar();
  const StageDescriptor* desc = StageRegistry::instance().find(name);
  if (!desc) {
    std::vector<std::string> known;
    for (const StageDescriptor* d : StageRegistry::instance().all()) known.push_back(d->name);
    const std::string near = closest_match(name, known);
    diag.add(key.Mark(), fmt::format("stage '{}' is unknown ({})", name,
                                     near.empty() ? "'stylepipe stages' lists them" : "did you mean '" + near + "'?"));
    return;
  }
  StageConfig stage;
  stage.name = name;
  stage.line = config_detail::line_of(key.Mark());
  stage.column = config_detail::column_of(key.Mark());
  std::map<std::string, YAML::Node> given;
  const Section section{desc->params, fmt::format("stage '{}'", name), "parameter"};
  if (!read_section(section, value, diag, stage.params, &given)) return;
  const std::filesystem::path config_dir = std::filesystem::path(config.path).parent_path();
  for (const ParamSpec& spec : desc->params) {
    if (!spec.config_relative_path || !stage.params.given(spec.name) || config_dir.empty()) continue;
    const std::string& file = stage.params.get_string(spec.name);
    const bool keyword = std::holds_alternative<std::string>(spec.default_value) &&
                         std::get<std::string>(spec.default_value) == file;
    if (!keyword && !file.empty() && std::filesystem::path(file).is_relative())
      stage.params.set(spec.name, (config_dir / file).lexically_normal().string());
  }
  if (desc->validate) {
    std::optional<std::string> problem;
    try {
      problem = desc->validate(stage.params);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (problem) {
      diag.add(locate_validate_message(*problem, given, key.Mark()), fmt::format("stage '{}': {}", name, *problem));
      return;
    }
  }
  config.stages.push_back(std::move(stage));
}

void read_pipeline(const YAML::Node& key, const YAML::Node& value, Diagnostics& diag, Config& config) {
  const char* example = "'- scale: {factor: 1}'";
  if (value.IsNull() || (value.IsSequence() && value.size() == 0)) {
    diag.add(value.IsNull() ? key.Mark() : value.Mark(),
             fmt::format("'pipeline' is empty: list at least one stage, like {}", example));
    return;
  }
  if (!value.IsSequence()) {
    diag.add(value.Mark(),
             fmt::format("'pipeline' must be a list of stages, each like {} (got {})", example, describe(value)));
    return;
  }
  for (const YAML::Node& entry : value) {
    if (entry.IsMap() && entry.size() > 0) {
      std::vector<std::string> names;
      for (auto it = entry.begin(); it != entry.end(); ++it)
        names.push_back(it->first.IsScalar() ? "'" + it->first.Scalar() + "'" : describe(it->first));
      if (names.size() > 1) {
        auto second = std::next(entry.begin());
        diag.add(second->first.Mark(),
                 fmt::format("pipeline entry names {} stages ({}); start each stage on its own '- ' line",
                             names.size(), join(names)));
      }
      for_each_entry(entry, diag,
                     [&](const YAML::Node& k, const YAML::Node& v) { read_stage(k, v, diag, config); });
      continue;
    }
    const YAML::Mark where = entry.IsNull() ? value.Mark() : entry.Mark();
    if (entry.IsScalar())
      diag.add(where, fmt::format("pipeline entry must be a stage name with its parameters, like '- {}: {{}}' (got {})",
                                  entry.Scalar(), describe(entry)));
    else
      diag.add(where, fmt::format("pipeline entry must be a one-key map from a stage name to its parameters, like "
                                  "{} (got {})",
                                  example, describe(entry.IsMap() ? YAML::Node() : entry)));
  }
}

void read_output(const YAML::Node& /*key*/, const YAML::Node& value, Diagnostics& diag, Config& config) {
  Params p;
  std::map<std::string, YAML::Node> given;
  const bool table_ok = read_section({output_param_table(), "'output'", "field"}, value, diag, p, &given);
  // Names FFmpeg does not know would otherwise fail only after the input is open.
  bool names_ok = true;
  for (const char* field : {"codec", "pixel_format", "format"}) {
    auto it = given.find(field);
    if (it == given.end()) continue;
    if (std::string problem = config_detail::check_output_name(field, p.get_string(field)); !problem.empty()) {
      diag.add(it->second.Mark(), fmt::format("field '{}' of 'output' {}", field, problem));
      names_ok = false;
    }
  }
  if (!table_ok || !names_ok) return;
  OutputDefaults& o = config.output;
  if (p.given("codec")) o.codec = p.get_string("codec");
  if (p.given("crf")) o.crf = int(p.get_int("crf"));
  if (p.given("preset")) o.preset = p.get_string("preset");
  if (p.given("pixel_format")) o.pixel_format = p.get_string("pixel_format");
  if (p.given("format")) o.format = p.get_string("format");
}

void read_settings(const YAML::Node& /*key*/, const YAML::Node& value, Diagnostics& diag, Config& config) {
  Params p;
  if (!read_section({settings_param_table(), "'settings'", "field"}, value, diag, p, nullptr)) return;
  config.settings.frames_in_flight = int(p.get_int("frames_in_flight"));
  config.settings.queue_depth = int(p.get_int("queue_depth"));
}

// yaml-cpp's messages name the parser state; say what the writer likely missed.
std::string syntax_hint(const std::string& message) {
  static const std::pair<const char*, const char*> hints[] = {
      {"end of map flow not found", " (a '{' is not closed by '}' before this point)"},
      {"end of sequence flow not found", " (a '[' is not closed by ']' before this point)"},
      {"end of map not found", " (the indentation does not line up with the lines above)"},
      {"end of sequence not found", " (the indentation does not line up with the lines above)"},
      {"illegal map value", " (an unexpected ':'; quote a value that contains ': ')"},
  };
  for (const auto& [text, hint] : hints)
    if (message == text) return hint;
  return "";
}

// yaml-cpp's message for a tab in the indentation does not mention the tab.
std::string tab_hint(const std::string& text, const YAML::Mark& mark) {
  if (mark.line < 0) return "";
  size_t start = 0;
  for (int line = 0; line < mark.line && start != std::string::npos; ++line) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos) return "";
  for (size_t i = start; i < text.size() && (text[i] == ' ' || text[i] == '\t'); ++i)
    if (text[i] == '\t') return " (a tab in the indentation: YAML indents with spaces only)";
  return "";
}

// YAML breaks lines at CR LF, LF and a lone CR (old Mac files). yaml-cpp 0.7
// (Debian 12) takes a lone CR for text: a CR-only file is a scalar, and a
// config with CR line ends is one long line and a syntax error. yaml-cpp 0.8
// (Debian 13) reads both as YAML says. A lone CR becomes LF here, one byte for
// one, so that every version reads the same config at the same positions.
std::string with_lf_line_breaks(const std::string& text) {
  std::string out = text;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == '\r' && (i + 1 == out.size() || out[i + 1] != '\n')) out[i] = '\n';
  return out;
}

}  // namespace

Config parse_config(const std::string& file_text, const std::string& display_path) {
  Diagnostics diag;
  Config config;
  config.path = display_path;
  config.text = file_text;
  const std::string yaml_text = with_lf_line_breaks(file_text);
  config_detail::YamlDocuments documents;
  try {
    documents = config_detail::load_documents(yaml_text);
  } catch (const YAML::Exception& e) {
    diag.add(e.mark, "YAML syntax: " + e.msg + syntax_hint(e.msg) + tab_hint(yaml_text, e.mark));
    throw diag.error(display_path);
  }
  const char* pipeline_example = "pipeline: [ {scale: {factor: 1}} ]";
  if (documents.first.IsNull()) {
    diag.add(1, 1, fmt::format("config is empty: it needs a 'pipeline' list of stages, like '{}'", pipeline_example));
    throw diag.error(display_path);
  }
  if (documents.second_document)
    diag.add(*documents.second_document, "a config is one YAML document; remove the '---' and what follows it");
  const YAML::Node& root = documents.first;
  if (!root.IsMap()) {
    diag.add(root.Mark(), fmt::format("a config is a map with a 'pipeline' list of stages, like '{}' (got {})",
                                      pipeline_example, describe(root)));
    throw diag.error(display_path);
  }

  static const std::map<std::string, void (*)(const YAML::Node&, const YAML::Node&, Diagnostics&, Config&)>
      sections = {{"pipeline", read_pipeline}, {"output", read_output}, {"settings", read_settings}};
  bool has_pipeline = false;
  for_each_entry(root, diag, [&](const YAML::Node& key, const YAML::Node& value) {
    auto it = sections.find(key.Scalar());
    if (it == sections.end()) {
      const std::string near = closest_match(key.Scalar(), {"pipeline", "output", "settings"});
      diag.add(key.Mark(), fmt::format("unknown top-level key '{}' ({})", key.Scalar(),
                                       near.empty() ? "expected pipeline, output or settings"
                                                    : "did you mean '" + near + "'?"));
      return;
    }
    has_pipeline |= it->first == "pipeline";
    it->second(key, value, diag, config);
  });
  if (!has_pipeline)
    diag.add(root.Mark(), fmt::format("missing 'pipeline', the list of stages to run, like '{}'", pipeline_example));
  if (diag.count() > 0) throw diag.error(display_path);
  return config;
}

Config load_config(const std::string& path) {
  std::string why;
  const std::optional<std::string> text = read_whole_file(path, &why);
  if (!text) throw Error(ExitCode::no_input, fmt::format("{}: error: cannot open config ({})", path, why));
  return parse_config(*text, path);
}

}  // namespace sp
