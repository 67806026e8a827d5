// Which GPU an ordinal is, in CUDA_VISIBLE_DEVICES's terms (both builds: a
// CPU-only build still passes the variable on to worker processes).
#include <algorithm>
#include <cstdlib>
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

}  // namespace sp
