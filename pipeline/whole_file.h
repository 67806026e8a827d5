#pragma once
// A small file's whole text: configs, manifests, stats, /proc and /sys files.
#include <optional>
#include <string>

namespace sp {

// nullopt where the file cannot be opened.
std::optional<std::string> read_whole_file(const std::string& path);

}  // namespace sp
