#include <algorithm>

#include "pipeline/stage.h"

namespace sp {

const char* to_string(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

StageRegistry& StageRegistry::instance() {
  static StageRegistry registry;
  return registry;
}

void StageRegistry::add(StageDescriptor d) {
  std::string name = d.name;
  stages_[name] = std::move(d);
}

const StageDescriptor* StageRegistry::find(const std::string& name) const {
  auto it = stages_.find(name);
  return it == stages_.end() ? nullptr : &it->second;
}

std::vector<const StageDescriptor*> StageRegistry::all() const {
  std::vector<const StageDescriptor*> out;
  for (const auto& [name, d] : stages_) out.push_back(&d);
  return out;
}

}  // namespace sp
