#include "pipeline/cores.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "pipeline/whole_file.h"

namespace sp {
namespace {

int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return int(std::thread::hardware_concurrency());
  return CPU_COUNT(&set);
}

// The smallest quota on the way from this process's cgroup up to the root:
// a parent's limits its children too.
std::optional<int> cgroup_quota_cores() {
  std::istringstream lines(read_whole_file("/proc/self/cgroup").value_or(""));
  std::string line, group;
  while (std::getline(lines, line))
    if (line.rfind("0::", 0) == 0) group = line.substr(3);  // cgroup v2's single hierarchy
  if (group.empty()) return std::nullopt;
  const std::filesystem::path root = "/sys/fs/cgroup";
  std::optional<int> least;
  for (std::filesystem::path dir = root / std::filesystem::path(group).relative_path();; dir = dir.parent_path()) {
    if (const std::optional<int> cores = cores_of_cpu_max(read_whole_file(dir / "cpu.max").value_or("")))
      least = std::min(least.value_or(*cores), *cores);
    if (dir == root || dir.parent_path() == dir) break;
  }
  return least;
}

}  // namespace

std::optional<int> cores_of_cpu_max(std::string_view text) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view quota_text = text.substr(0, space);
  std::string_view period_text = text.substr(space + 1);
  while (!period_text.empty() && (period_text.back() == '\n' || period_text.back() == ' ')) period_text.remove_suffix(1);
  long long quota = 0, period = 0;
  const auto parse = [](std::string_view s, long long& v) {
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v);
    return error == std::errc() && end == s.data() + s.size() && v > 0;
  };
  if (quota_text == "max" || !parse(quota_text, quota) || !parse(period_text, period)) return std::nullopt;
  return int(std::max<long long>(1, (quota + period - 1) / period));
}

int usable_cores() {
  int cores = std::max(1, affinity_cores());
  if (const std::optional<int> quota = cgroup_quota_cores()) cores = std::min(cores, *quota);
  return cores;
}

int threads_each(int jobs) { return std::max(1, int(std::lround(1.5 * usable_cores() / std::max(1, jobs)))); }

}  // namespace sp
