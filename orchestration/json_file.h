#pragma once
// A worker's stats file, read after it ended: null where it is missing (the
// worker failed before writing it), a discarded value where it is cut short.
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/whole_file.h"

namespace sp {

inline nlohmann::json read_json_file(const std::string& path) {
  const std::optional<std::string> text = read_whole_file(path);
  if (!text) return nullptr;
  return nlohmann::json::parse(*text, nullptr, false);
}

}  // namespace sp
