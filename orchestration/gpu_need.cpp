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

}  // namespace

GpuNeed gpus_needed(const GpuNeedQuestion& q) {
  GpuNeed need{q.gpus_listed, {}};
  if (q.gpus_listed <= 1 || !q.chain_gpu_ms || q.software_encoder.empty() || q.input.width <= 0 ||
      q.input.height <= 0)
    return need;
  const double megapixels = double(q.input.width) * q.input.height / 1e6;
  const double encoder_fps = q.cores * kX264MegapixelsPerCoreSecond / megapixels;
  const double gpu_share = encoder_fps * *q.chain_gpu_ms / 1000;  // GPU-seconds a second
  need.gpus = std::clamp(int(std::ceil(gpu_share)), 1, q.gpus_listed);
  if (need.gpus == q.gpus_listed) return need;
  need.why = fmt::format(
      "{} of {} GPUs: the chain takes {:.2f} ms of a GPU a frame at {}x{}, and {} core{} encode {} at {:.0f} fps at "
      "most, {:.2f} of a GPU's time",
      need.gpus, q.gpus_listed, *q.chain_gpu_ms, q.input.width, q.input.height, q.cores, q.cores == 1 ? "" : "s",
      q.software_encoder, encoder_fps, gpu_share);
  return need;
}

std::optional<double> chain_gpu_milliseconds(const Config& config, Size input) {
  double total = 0;
  for (const StageConfig& s : config.stages) {
    const std::optional<double> ms = StageRegistry::instance().create(s.name, s.params)->gpu_milliseconds(input);
    if (!ms) return std::nullopt;
    total += *ms;
  }
  return config.stages.empty() ? std::nullopt : std::optional(total);
}

}  // namespace sp
