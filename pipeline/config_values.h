#pragma once
// Internals of the config loader: diagnostics with file positions and the
// conversion of YAML nodes into typed parameter values. Only config*.cpp use it.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/params.h"

namespace sp::config_detail {

using Diagnostic = ConfigProblem;

class Diagnostics {
 public:
  void add(const YAML::Mark& mark, std::string message);
  void add(int line, int column, std::string message);
  size_t count() const { return list_.size(); }
  // The problems in file order, each once, their messages on one line.
  std::vector<ConfigProblem> sorted() const;
  // "path:line:col: error: message" lines in file order, joined with '\n'.
  std::string render(const std::string& path) const;
  // The exception parse_config throws with these problems.
  ConfigErrors error(const std::string& path) const { return ConfigErrors(path, sorted(), render(path)); }
  const std::vector<Diagnostic>& list() const { return list_; }

 private:
  std::vector<Diagnostic> list_;
};

// The first YAML document of a config, and where a second one starts if the
// text holds more. Throws YAML::Exception on a syntax error.
struct YamlDocuments {
  YAML::Node first;  // Null when the text holds no document
  std::optional<YAML::Mark> second_document;
};
YamlDocuments load_documents(const std::string& text);

// 1-based line/column of a node; yaml-cpp's marks are 0-based and -1 when unknown.
int line_of(const YAML::Mark& mark);
int column_of(const YAML::Mark& mark);
std::string position_text(const YAML::Mark& mark);  // "3:12"

// How a node reads in a message: 'abc', the string "12", a list, a map, nothing.
std::string describe(const YAML::Node& node);

// "parameter 'width' of stage 'scale'", used as the subject of value errors.
std::string param_subject(const std::string& item_word, const std::string& param, const std::string& owner);

// Converts `value` to the type of `spec` and checks range and choices. On a
// problem adds a diagnostic (at `value`, or at `key` where the value has no
// usable position) and returns nullopt. A null value yields the default for
// an optional_default parameter and is an error otherwise.
std::optional<ParamValue> convert_value(const ParamSpec& spec, const YAML::Node& key, const YAML::Node& value,
                                        const std::string& subject, Diagnostics& diagnostics);

// "" when FFmpeg knows `name` for the `output:` field `field` (codec: a video
// encoder, pixel_format: a pixel format, format: a muxer), else why not,
// e.g. "names no FFmpeg video encoder 'libx26' (did you mean 'libx264'?)".
std::string check_output_name(const std::string& field, const std::string& name);

}  // namespace sp::config_detail
