#pragma once
// --jobs auto over several GPUs (stylepipe::choose_auto_devices), on the
// host's facts as read before CUDA starts (api/ only; tests give their own).
#include <string>
#include <vector>

#include "orchestration/auto_jobs.h"
#include "pipeline/config.h"
#include "pipeline/device.h"
#include "stylepipe/transcode.h"

namespace stylepipe::detail {

struct GpuHostFacts {
  std::vector<sp::DriverGpu> gpus;  // the driver's list: none, no narrowing
  int visible = -1;                 // sp::gpus_visible_without_driver(gpus)
  int cores = 1;
  std::string nvenc_cache;  // sp::gpus_without_nvenc_path()
};
GpuHostFacts gpu_host_facts();

struct AutoDevices {
  std::string devices;
  std::string reason;  // why some were left out; empty: the request's own
};
// The --devices the request's run uses on such a host: the request's own,
// or the first of them that its chain keeps busy, and why.
AutoDevices auto_devices(const TranscodeRequest& request, const GpuHostFacts& host);
// stylepipe::choose_auto_devices on facts already read.
void choose_auto_devices(TranscodeRequest& request, const GpuHostFacts& host);

// What --jobs auto weighs the chain's warm-up frames at (sp::warmup_weight),
// for a run on `gpus` GPUs: below 1 only where they are decoded on NVDEC (a
// codec it takes, --hwdec not none), every stage bounds its GPU time on GPUs
// like those measured, and the encoder is libx264 or libx265 for sure.
double warmup_weight(const TranscodeRequest& request, const sp::Config& config, const sp::InputLength& input, int gpus,
                     const GpuHostFacts& host);

}  // namespace stylepipe::detail
