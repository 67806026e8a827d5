#pragma once
// A small file's whole text: configs, manifests, stats, /proc and /sys files.
#include <optional>
#include <string>

namespace sp {

// nullopt where the file cannot be opened or read (a directory opens, and
// then fails to read); `why`, where given, then says why (strerror's words).
std::optional<std::string> read_whole_file(const std::string& path, std::string* why = nullptr);

}  // namespace sp
