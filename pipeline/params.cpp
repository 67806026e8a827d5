#include "pipeline/params.h"

#include <fmt/format.h>

#include "pipeline/errors.h"

namespace sp {
namespace {

// Name of the alternative a ParamValue holds, for misuse messages.
const char* held_type(const ParamValue& v) {
  switch (v.index()) {
    case 0: return "a boolean";
    case 1: return "an integer";
    case 2: return "a number";
    case 3: return "a string";
    default: return "a number list";
  }
}

// A stage reading a parameter as the wrong type, or one its table does not
// declare, is a programming error in that stage, never a user mistake: the
// config loader has already checked every value against the table.
[[noreturn]] void misuse(const std::string& name, const char* wanted, const ParamValue* held) {
  if (!held)
    throw Error(ExitCode::internal,
                fmt::format("parameter '{}' was read as {} but is not in the stage's parameter table", name, wanted));
  throw Error(ExitCode::internal,
              fmt::format("parameter '{}' was read as {} but holds {} ({})", name, wanted, held_type(*held),
                          format_value(*held)));
}

}  // namespace

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::boolean: return "boolean";
    case ParamType::integer: return "integer";
    case ParamType::number: return "number";
    case ParamType::string: return "string";
    case ParamType::choice: return "choice";
    case ParamType::number_list: return "number_list";
  }
  return "unknown";
}

bool Params::get_bool(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) misuse(name, "a boolean", nullptr);
  if (const bool* b = std::get_if<bool>(&it->second)) return *b;
  misuse(name, "a boolean", &it->second);
}

int64_t Params::get_int(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) misuse(name, "an integer", nullptr);
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return *i;
  misuse(name, "an integer", &it->second);
}

double Params::get_number(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) misuse(name, "a number", nullptr);
  if (const double* d = std::get_if<double>(&it->second)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return double(*i);
  misuse(name, "a number", &it->second);
}

const std::string& Params::get_string(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) misuse(name, "a string", nullptr);
  if (const std::string* s = std::get_if<std::string>(&it->second)) return *s;
  misuse(name, "a string", &it->second);
}

const std::vector<double>& Params::get_list(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) misuse(name, "a number list", nullptr);
  if (const auto* l = std::get_if<std::vector<double>>(&it->second)) return *l;
  misuse(name, "a number list", &it->second);
}

Params default_params(const std::vector<ParamSpec>& table) {
  Params p;
  for (const ParamSpec& spec : table) p.set(spec.name, spec.default_value);
  return p;
}

namespace {
// Shortest text that reads back to the same double, always recognisable as a
// number rather than an integer ("1.0", not "1").
std::string format_double(double d) {
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 'n': inf/nan
  return s;
}
}  // namespace

std::string format_value(const ParamValue& v) {
  switch (v.index()) {
    case 0: return std::get<bool>(v) ? "true" : "false";
    case 1: return fmt::format("{}", std::get<int64_t>(v));
    case 2: return format_double(std::get<double>(v));
    case 3: return std::get<std::string>(v);
    default: {
      std::string s = "[";
      const auto& list = std::get<std::vector<double>>(v);
      for (size_t i = 0; i < list.size(); ++i) s += (i ? ", " : "") + format_double(list[i]);
      return s + "]";
    }
  }
}

}  // namespace sp
