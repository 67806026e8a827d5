#include "pipeline/whole_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sp {

std::optional<std::string> read_whole_file(const std::string& path, std::string* why) {
  const auto fail = [why](int error) -> std::optional<std::string> {
    if (why) *why = std::strerror(error);
    return std::nullopt;
  };
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return fail(errno);
  std::string text;
  char buffer[65536];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  const int read_error = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (read_error) return fail(read_error);
  return text;
}

}  // namespace sp
