#include "pipeline/environment.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include "pipeline/errors.h"

namespace sp {

std::optional<int64_t> integer_from_environment(const char* name, int64_t min, int64_t max, const std::string& what) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long number = std::strtoll(value, &end, 10);
  if (*end || errno || number < min || number > max)
    throw Error(ExitCode::usage, fmt::format("{}='{}' is not {}", name, value, what));
  return int64_t(number);
}

}  // namespace sp
