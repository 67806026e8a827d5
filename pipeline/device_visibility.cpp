// Which GPU an ordinal is, in CUDA_VISIBLE_DEVICES's terms (both builds: a
// CPU-only build still passes the variable on to worker processes).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "pipeline/device.h"

namespace sp {

namespace {
// Its entries; nullopt where it is unset (every GPU is visible). Set and
// empty, it hides them all.
std::optional<std::vector<std::string>> visible_entries() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible) return std::nullopt;
  std::vector<std::string> entries;
  std::stringstream list(visible);
  for (std::string entry; std::getline(list, entry, ',');) entries.push_back(entry);
  return entries;
}
}  // namespace

std::string visible_device_entry(int ordinal) {
  const auto entries = visible_entries();
  return entries && ordinal < int(entries->size()) ? (*entries)[size_t(ordinal)] : std::to_string(ordinal);
}

std::string visible_devices_up_to(int count) {
  const auto entries = visible_entries();
  const int kept = entries ? std::min(count, int(entries->size())) : count;
  std::string list;
  for (int i = 0; i < kept; ++i) list += (i ? "," : "") + (entries ? (*entries)[size_t(i)] : std::to_string(i));
  return list;
}

namespace {
// "GPU UUID: \t GPU-..." -> "GPU-...": the value after the first colon, trimmed.
std::string field_value(const std::string& line) {
  const size_t colon = line.find(':');
  const size_t begin = line.find_first_not_of(" \t", colon + 1);
  const size_t end = line.find_last_not_of(" \t\r");
  return begin == std::string::npos ? std::string() : line.substr(begin, end - begin + 1);
}
}  // namespace

std::vector<DriverGpu> driver_gpus(const std::string& proc_dir) {
  namespace fs = std::filesystem;
  std::vector<DriverGpu> gpus;
  std::error_code ec;
  for (fs::directory_iterator it(proc_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream information(it->path() / "information");
    DriverGpu gpu;
    for (std::string line; std::getline(information, line);) {
      if (line.rfind("Model:", 0) == 0) gpu.model = field_value(line);
      else if (line.rfind("GPU UUID:", 0) == 0) gpu.uuid = field_value(line);
    }
    if (!gpu.uuid.empty()) gpus.push_back(gpu);
  }
  std::sort(gpus.begin(), gpus.end(), [](const DriverGpu& a, const DriverGpu& b) { return a.uuid < b.uuid; });
  return gpus;
}

int gpus_visible_without_driver(const std::vector<DriverGpu>& driver) {
  if (const auto entries = visible_entries()) return int(entries->size());
  return driver.empty() ? -1 : int(driver.size());
}

}  // namespace sp
