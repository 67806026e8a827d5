#include "cli/github_annotations.h"

#include <fmt/format.h>

namespace sp::cli {

std::string escape_command_data(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string escape_command_property(const std::string& text) {
  std::string out;
  for (const char c : escape_command_data(text)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

std::string github_annotation(const std::string& file, std::optional<stylepipe::ConfigProblem> at, const std::string& message) {
  std::string properties = "file=" + escape_command_property(file);
  if (at) properties += fmt::format(",line={},col={}", at->line, at->column);
  return fmt::format("::error {}::{}\n", properties, escape_command_data(message));
}

std::string github_annotations(const stylepipe::ConfigError& errors) {
  std::string out;
  for (const stylepipe::ConfigProblem& p : errors.problems()) out += github_annotation(errors.file(), p, p.message);
  return out;
}

}  // namespace sp::cli
