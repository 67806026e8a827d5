#include "orchestration/gpu_need.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "pipeline/stage.h"

namespace sp {
namespace {

// libx264 ultrafast at 1080p, megapixels a second a core, at its best over
// the hosts measured (N ffmpeg processes side by side): 108-119 on 16-core
// hosts (session 12), 68-91 on 32 cores, 35-57 on 64 (sessions 31-34). An
// upper bound: it may give a chain a GPU it does not need, never take one it
// does. Slower presets and libx265 encode less a core, so it bounds them too.
constexpr double kX264MegapixelsPerCoreSecond = 120;

// Both the chain's GPU time and the encoder's rate are known.
bool known_both_sides(const GpuNeedQuestion& q) {
  return q.chain && !q.software_encoder.empty() && q.input.width > 0 && q.input.height > 0 &&
         q.chain->output.width > 0 && q.chain->output.height > 0;
}

// The frames a second the cores encode at the chain's output size, at most.
double encoder_fps_bound(const GpuNeedQuestion& q) {
  const Size encoded = q.chain->output;
  return std::max(q.cores, 1) * kX264MegapixelsPerCoreSecond / (double(encoded.width) * encoded.height / 1e6);
}

}  // namespace

GpuNeed gpus_needed(const GpuNeedQuestion& q) {
  GpuNeed need{q.gpus_listed, {}};
  if (q.gpus_listed <= 1 || !known_both_sides(q)) return need;
  const Size encoded = q.chain->output;
  const double encoder_fps = encoder_fps_bound(q);
  const double gpu_share = encoder_fps * q.chain->milliseconds / 1000;  // GPU-seconds a second
  need.gpus = std::clamp(int(std::ceil(gpu_share)), 1, q.gpus_listed);
  if (need.gpus == q.gpus_listed) return need;
  const std::string into =
      encoded == q.input ? std::string() : fmt::format(" (into {}x{})", encoded.width, encoded.height);
  need.why = fmt::format(
      "{} of {} GPUs: the chain takes {:.2f} ms of a GPU a frame at {}x{}{}, and {} core{} encode {} at {:.0f} fps at "
      "most, {:.2f} of a GPU's time",
      need.gpus, q.gpus_listed, q.chain->milliseconds, q.input.width, q.input.height, into, q.cores,
      q.cores == 1 ? "" : "s", q.software_encoder, encoder_fps, gpu_share);
  return need;
}

double warmup_weight(const GpuNeedQuestion& q) {
  if (q.gpus_listed < 1 || !known_both_sides(q)) return 1;
  const double gpu_ms = q.chain->milliseconds / q.gpus_listed;
  const double encoder_ms = 1000 / encoder_fps_bound(q);
  return gpu_ms / std::max(gpu_ms, encoder_ms);
}

bool gpu_costs_hold_on(const std::string& model) {
  static const char* const kMeasuredOrFaster[] = {"H100", "H200", "H800", "B100", "B200", "B300"};
  // The PCIe cards of the kind have 2 TB/s of the SXM's 3.35-4.8.
  if (model.find("PCIe") != std::string::npos) return false;
  return std::any_of(std::begin(kMeasuredOrFaster), std::end(kMeasuredOrFaster),
                     [&](const char* name) { return model.find(name) != std::string::npos; });
}

std::optional<GpuCost> chain_gpu_cost(const std::vector<StageSpec>& stages, Size input) {
  if (stages.empty()) return std::nullopt;
  GpuCost chain{0, input};
  for (const StageSpec& s : stages) {
    const std::optional<GpuCost> stage = StageRegistry::instance().create(s.name, s.params)->gpu_cost(chain.output);
    if (!stage) return std::nullopt;
    chain.milliseconds += stage->milliseconds;
    chain.output = stage->output;
  }
  return chain;
}

std::optional<GpuCost> chain_gpu_cost(const Config& config, Size input) {
  std::vector<StageSpec> stages;
  for (const StageConfig& s : config.stages) stages.emplace_back(s.name, s.params);
  return chain_gpu_cost(stages, input);
}

}  // namespace sp
