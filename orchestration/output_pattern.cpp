#include "orchestration/output_pattern.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "pipeline/errors.h"

namespace sp {
namespace {

struct Placeholders {
  std::string stem, name, ext, index;
};

// Walks the pattern once; with `values` it fills in, without it only checks.
std::string expand(const std::string& pattern, const Placeholders* values) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}')
      throw Error(ExitCode::usage, "-o " + pattern + ": a '}' without its '{' (write }} for a literal brace)");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = pattern.find('}', i);
    if (close == std::string::npos)
      throw Error(ExitCode::usage, "-o " + pattern + ": a '{' without its '}' (write {{ for a literal brace)");
    const std::string key = pattern.substr(i + 1, close - i - 1);
    const std::string* value = nullptr;
    static const Placeholders none;
    const Placeholders& v = values ? *values : none;
    if (key == "stem") value = &v.stem;
    else if (key == "name") value = &v.name;
    else if (key == "ext") value = &v.ext;
    else if (key == "index") value = &v.index;
    if (!value)
      throw Error(ExitCode::usage, "-o " + pattern + ": unknown placeholder {" + key +
                                       "} (known: {stem}, {name}, {ext}, {index})");
    out += *value;
    i = close;
  }
  return out;
}

}  // namespace

bool is_output_pattern(const std::string& output) { return output.find_first_of("{}") != std::string::npos; }

void check_output_pattern(const std::string& pattern) { expand(pattern, nullptr); }

std::string fill_output_pattern(const std::string& pattern, const std::string& input, size_t index) {
  const std::filesystem::path path(input);
  const std::string extension = path.extension().string();
  const Placeholders values{path.stem().string(), path.filename().string(),
                            extension.empty() ? extension : extension.substr(1), std::to_string(index)};
  return expand(pattern, &values);
}

bool is_input_glob(const std::string& input) {
  if (input.find_first_of("*?[") == std::string::npos || input.find("://") != std::string::npos) return false;
  std::error_code ec;
  return !std::filesystem::exists(input, ec);
}

std::vector<std::string> expand_input_globs(const std::vector<std::string>& inputs) {
  std::vector<std::string> expanded;
  for (const std::string& input : inputs) {
    if (!is_input_glob(input)) {
      expanded.push_back(input);
      continue;
    }
    glob_t found{};
    std::unique_ptr<glob_t, decltype(&globfree)> release(&found, &globfree);
    const int r = glob(input.c_str(), GLOB_ERR, nullptr, &found);
    if (r == GLOB_NOMATCH) throw Error(ExitCode::usage, "-i " + input + ": no file matches");
    if (r == GLOB_ABORTED) throw Error(ExitCode::io_error, "-i " + input + ": a folder of the pattern cannot be read");
    if (r != 0) throw Error(ExitCode::internal, "-i " + input + ": glob(3) failed (" + std::to_string(r) + ")");
    // glob(3) sorts by the locale's collation; byte order is the same everywhere.
    std::vector<std::string> matches(found.gl_pathv, found.gl_pathv + found.gl_pathc);
    std::sort(matches.begin(), matches.end());
    expanded.insert(expanded.end(), matches.begin(), matches.end());
  }
  return expanded;
}

}  // namespace sp
