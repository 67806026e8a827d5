// Fuzz harness: YAML text in, a validated config or one sp::Error out. A
// crash, another exception, a sanitizer report or an error message outside
// the README's `path:line:col: error: ...` form is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>

#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace {

constexpr const char* kDisplayPath = "fuzz.yaml";

bool one_error_per_line(const std::string& message) {
  static const std::regex line_form(R"(fuzz\.yaml:[1-9][0-9]*:[1-9][0-9]*: error: .+)");
  std::istringstream lines(message);
  std::string line;
  bool any = false;
  while (std::getline(lines, line)) {
    if (!std::regex_match(line, line_form)) return false;
    any = true;
  }
  return any;
}

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "config fuzz: %s:\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  sp::set_log_level(sp::LogLevel::quiet);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const sp::Config config = sp::parse_config(text, kDisplayPath);
    if (config.stages.empty()) finding("a config without stages was accepted", text);
  } catch (const sp::Error& e) {
    if (e.code() != sp::ExitCode::config) finding("an error with an exit code other than 78", e.what());
    if (!one_error_per_line(e.what())) finding("an error message outside 'path:line:col: error: ...'", e.what());
  }
  return 0;
}
