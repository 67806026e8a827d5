#include <algorithm>
#include <cmath>

#include "pipeline/errors.h"
#include "pipeline/stage.h"

namespace sp {

const char* to_string(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

int ema_warmup_frames(double a) {
  if (a <= 0) return 0;
  if (a >= 1) return 1 << 20;
  return int(std::ceil(std::log(1.0 / 512) / std::log(a)));
}

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

std::unique_ptr<Stage> StageRegistry::create(const std::string& name, const Params& params) const {
  const StageDescriptor* d = find(name);
  if (!d) throw Error(ExitCode::config, "stage '" + name + "' is unknown");
  return d->create(params);
}

std::vector<const StageDescriptor*> StageRegistry::all() const {
  std::vector<const StageDescriptor*> out;
  for (const auto& [name, d] : stages_) out.push_back(&d);
  return out;
}

}  // namespace sp
