#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace sp {

enum class ParamType { boolean, integer, number, string, choice, number_list };

const char* to_string(ParamType t);

using ParamValue = std::variant<bool, int64_t, double, std::string, std::vector<double>>;

// One row of a stage's parameter table. The table is the single source for
// YAML validation, `stylepipe stages`, its JSON schema and the README reference.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  ParamValue default_value;  // std::monostate-free: every parameter has a default
  std::optional<double> min;  // inclusive, for integer/number/number_list items
  std::optional<double> max;
  std::vector<std::string> choices;  // for ParamType::choice
  std::string doc;
  bool optional_default = false;  // true: the default means "unset/auto" (e.g. width)
  // A string naming a file: a relative path written in a config file is taken
  // relative to that file's directory (the default value, e.g. "builtin", is kept).
  bool config_relative_path = false;
};

// One row of a stage's parameter table, in the order the docs show it.
inline ParamSpec param_row(std::string name, ParamType type, ParamValue default_value, std::optional<double> min,
                           std::optional<double> max, std::vector<std::string> choices, std::string doc,
                           bool optional_default = false) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = type;
  s.default_value = std::move(default_value);
  s.min = min;
  s.max = max;
  s.choices = std::move(choices);
  s.doc = std::move(doc);
  s.optional_default = optional_default;
  return s;
}

// A rule that a stage's `validate` checks beyond its parameter table: one
// relating several parameters, or one about the world (a file that must
// exist). The JSON schema cannot state these, so `stylepipe schema` and the
// docs list them by name ("lowpoly.points_or_points_per_mp") for editors to
// show, and the schema agreement test exempts them by that name.
struct ParamRule {
  std::string name;  // lower_snake_case, unique within the stage
  std::string text;  // what a config must satisfy, as a sentence
};

// Validated parameter values of one stage instance. Every key of the table is present.
class Params {
 public:
  void set(const std::string& name, ParamValue v) { values_[name] = std::move(v); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  // True when the user wrote the key (as opposed to it being filled from the default).
  bool given(const std::string& name) const { return given_.count(name) != 0; }
  void mark_given(const std::string& name) { given_[name] = true; }

  bool get_bool(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  double get_number(const std::string& name) const;  // accepts integers too
  const std::string& get_string(const std::string& name) const;
  const std::vector<double>& get_list(const std::string& name) const;
  const std::map<std::string, ParamValue>& values() const { return values_; }

 private:
  std::map<std::string, ParamValue> values_;
  std::map<std::string, bool> given_;
};

// Fills defaults for every key of `table`; used by tests and by the config loader.
Params default_params(const std::vector<ParamSpec>& table);

std::string format_value(const ParamValue& v);

}  // namespace sp
