#include "pipeline/config_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <tuple>

#include "pipeline/config.h"

namespace sp::config_detail {
namespace {

// A scalar written without quotes or an explicit tag is the only kind YAML
// resolves to booleans and numbers; a quoted "12" stays a string.
bool is_plain(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// YAML 1.2 core schema, decimal only: [-+]?[0-9]+
bool looks_integer(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

// YAML 1.2 core schema float without .inf/.nan: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool looks_number(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

bool looks_non_finite(const std::string& s) {
  std::string t = s;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.erase(0, 1);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return t == ".inf" || t == ".nan" || t == "inf" || t == "nan" || t == "infinity";
}

std::optional<bool> parse_bool(const YAML::Node& node) {
  if (!is_plain(node)) return std::nullopt;
  const std::string& s = node.Scalar();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

std::string bound_text(const ParamSpec& spec, double bound) {
  if (spec.type == ParamType::integer) return fmt::format("{}", int64_t(bound));
  return format_value(ParamValue{bound});
}

// "" when `v` is inside the spec's range, else "must be between 1 and 8".
std::string range_problem(const ParamSpec& spec, double v) {
  const bool low = spec.min && v < *spec.min, high = spec.max && v > *spec.max;
  if (!low && !high) return "";
  if (spec.min && spec.max)
    return fmt::format("must be between {} and {}", bound_text(spec, *spec.min), bound_text(spec, *spec.max));
  if (spec.min) return fmt::format("must be at least {}", bound_text(spec, *spec.min));
  return fmt::format("must be at most {}", bound_text(spec, *spec.max));
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// Reads one number (list item or scalar parameter) of `spec`'s type and range.
// `subject` names it in the message.
std::optional<ParamValue> read_number(const ParamSpec& spec, bool integer, const YAML::Node& node,
                                  const YAML::Mark& where, const std::string& subject, Diagnostics& diag) {
  const char* want = integer ? "an integer" : "a number";
  if (!is_plain(node)) {
    diag.add(where, fmt::format("{} must be {} (got {})", subject, want, describe(node)));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  double v = 0.0;
  int64_t i = 0;
  if (integer) {
    if (!looks_integer(s)) {
      diag.add(where, fmt::format("{} must be {} (got {})", subject, want, describe(node)));
      return std::nullopt;
    }
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), i);
    if (ec != std::errc() || ptr != s.data() + s.size()) {
      std::string why = range_problem(spec, s[0] == '-' ? -HUGE_VAL : HUGE_VAL);
      diag.add(where, fmt::format("{} {} (got {})", subject, why.empty() ? "does not fit in 64 bits" : why, s));
      return std::nullopt;
    }
    v = double(i);
  } else {
    if (looks_non_finite(s)) {
      diag.add(where, fmt::format("{} must be a finite number (got {})", subject, s));
      return std::nullopt;
    }
    if (!looks_number(s)) {
      diag.add(where, fmt::format("{} must be {} (got {})", subject, want, describe(node)));
      return std::nullopt;
    }
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
      diag.add(where, fmt::format("{} must be a finite number (got {})", subject, s));
      return std::nullopt;
    }
  }
  if (std::string why = range_problem(spec, v); !why.empty()) {
    diag.add(where, fmt::format("{} {} (got {})", subject, why, s));
    return std::nullopt;
  }
  return integer ? ParamValue{i} : ParamValue{v};
}

// Names and values quoted from the file may hold line breaks or other
// control characters (a quoted "a\nb", a stray carriage return): written
// as escapes, each problem stays on its one line and prints as it reads.
std::string escape_control_characters(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else out += fmt::format("\\x{:02x}", byte);
  }
  return out;
}

}  // namespace

int line_of(const YAML::Mark& mark) { return std::max(1, mark.line + 1); }
int column_of(const YAML::Mark& mark) { return std::max(1, mark.column + 1); }
std::string position_text(const YAML::Mark& mark) { return fmt::format("{}:{}", line_of(mark), column_of(mark)); }

void Diagnostics::add(const YAML::Mark& mark, std::string message) {
  add(line_of(mark), column_of(mark), std::move(message));
}

void Diagnostics::add(int line, int column, std::string message) {
  list_.push_back({std::max(1, line), std::max(1, column), std::move(message)});
}

std::vector<ConfigProblem> Diagnostics::sorted() const {
  std::vector<Diagnostic> sorted = list_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  // An alias repeats its anchor's nodes; report each problem once.
  sorted.erase(std::unique(sorted.begin(), sorted.end(),
                           [](const Diagnostic& a, const Diagnostic& b) {
                             return a.line == b.line && a.column == b.column && a.message == b.message;
                           }),
               sorted.end());
  for (Diagnostic& d : sorted) d.message = escape_control_characters(d.message);
  return sorted;
}

std::string Diagnostics::render(const std::string& path) const {
  std::string out;
  for (const Diagnostic& d : sorted()) {
    if (!out.empty()) out += '\n';
    out += fmt::format("{}:{}:{}: error: {}", path, d.line, d.column, d.message);
  }
  return out;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "nothing";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Scalar: break;
  }
  if (is_plain(node)) return "'" + node.Scalar() + "'";
  return "the string \"" + node.Scalar() + "\"";
}

std::string param_subject(const std::string& item_word, const std::string& param, const std::string& owner) {
  return fmt::format("{} '{}' of {}", item_word, param, owner);
}

std::optional<ParamValue> convert_value(const ParamSpec& spec, const YAML::Node& key, const YAML::Node& value,
                                        const std::string& subject, Diagnostics& diag) {
  // An implicit null has no position of its own (yaml-cpp marks the next token).
  const YAML::Mark where = value.IsNull() ? key.Mark() : value.Mark();
  if (value.IsNull() && spec.optional_default) return spec.default_value;

  switch (spec.type) {
    case ParamType::boolean: {
      if (auto b = parse_bool(value)) return ParamValue{*b};
      diag.add(where, fmt::format("{} must be a boolean, true or false (got {})", subject, describe(value)));
      return std::nullopt;
    }
    case ParamType::integer: return read_number(spec, true, value, where, subject, diag);
    case ParamType::number: return read_number(spec, false, value, where, subject, diag);
    case ParamType::string: {
      if (value.IsScalar()) return ParamValue{value.Scalar()};
      diag.add(where, fmt::format("{} must be a string (got {})", subject, describe(value)));
      return std::nullopt;
    }
    case ParamType::choice: {
      if (value.IsScalar()) {
        const std::string& s = value.Scalar();
        if (std::find(spec.choices.begin(), spec.choices.end(), s) != spec.choices.end()) return ParamValue{s};
      }
      std::string got = describe(value);
      if (value.IsScalar())
        if (std::string near = closest_match(value.Scalar(), spec.choices); !near.empty())
          got += "; did you mean '" + near + "'?";
      diag.add(where, fmt::format("{} must be one of {} (got {})", subject, join(spec.choices, ", "), got));
      return std::nullopt;
    }
    case ParamType::number_list: {
      if (!value.IsSequence()) {
        diag.add(where, fmt::format("{} must be a list of numbers like [1, 2.5] (got {})", subject, describe(value)));
        return std::nullopt;
      }
      std::vector<double> list;
      bool ok = true;
      size_t index = 0;
      for (const YAML::Node& item : value) {
        ++index;
        const YAML::Mark item_where = item.IsNull() ? value.Mark() : item.Mark();
        auto v = read_number(spec, false, item, item_where, fmt::format("item {} of {}", index, subject), diag);
        if (v) list.push_back(std::get<double>(*v));
        else ok = false;
      }
      if (!ok) return std::nullopt;
      return ParamValue{std::move(list)};
    }
  }
  return std::nullopt;
}

}  // namespace sp::config_detail

namespace sp {

namespace {
// Optimal string alignment distance: Levenshtein plus adjacent transpositions,
// so "widht" is one edit from "width".
size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}
}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = lower(word);
  // About one typo per three letters, at most three; never more edits than letters.
  const size_t allowed = std::max<size_t>(1, std::min<size_t>(3, w.size() / 3));
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(w, lower(c));
    if (d < best_distance && d <= allowed && d < std::max(w.size(), c.size())) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace sp
