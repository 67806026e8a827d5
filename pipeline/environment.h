#pragma once
// Integers that environment variables set: job-array indices, and switches
// for tests and benchmarks.
#include <cstdint>
#include <optional>
#include <string>

namespace sp {

// NAME's integer in [min, max]; nullopt where NAME is unset or empty.
// Anything else throws Error(usage): "NAME='value' is not WHAT".
std::optional<int64_t> integer_from_environment(const char* name, int64_t min, int64_t max, const std::string& what);

}  // namespace sp
