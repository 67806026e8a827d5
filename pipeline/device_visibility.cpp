// Which GPU an ordinal is, in CUDA_VISIBLE_DEVICES's terms (both builds: a
// CPU-only build still passes the variable on to worker processes).
#include <cstdlib>
#include <sstream>
#include <vector>

#include "pipeline/device.h"

namespace sp {

std::string visible_device_entry(int ordinal) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || !*visible) return std::to_string(ordinal);
  std::vector<std::string> entries;
  std::stringstream list(visible);
  for (std::string entry; std::getline(list, entry, ',');) entries.push_back(entry);
  return ordinal < int(entries.size()) ? entries[size_t(ordinal)] : std::to_string(ordinal);
}

}  // namespace sp
