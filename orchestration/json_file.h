#pragma once
// A worker's stats file, read after it ended: null where it is missing (the
// worker failed before writing it), a discarded value where it is cut short.
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace sp {

inline nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);
}

}  // namespace sp
