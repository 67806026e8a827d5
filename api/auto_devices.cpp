// --jobs auto over several GPUs: the ones the chain keeps busy
// (orchestration/gpu_need.h), decided before CUDA starts.
#include "api/auto_devices.h"

#include <algorithm>
#include <set>

#include "api/batch_request.h"
#include "api/request_options.h"
#include "codecs/media_writer.h"
#include "codecs/nvenc.h"
#include "orchestration/auto_jobs.h"
#include "orchestration/gpu_need.h"
#include "orchestration/parallel_run.h"
#include "pipeline/cores.h"
#include "pipeline/log.h"

namespace stylepipe {
namespace detail {
namespace {

// The software encoder the run will use whatever its GPUs: --encoder
// software, a codec NVENC does not have, or GPUs known to have no NVENC.
// Empty for NVENC, for a maybe, and for encoders other than x264 and x265,
// whose rate the estimate does not bound.
std::string sure_software_encoder(const TranscodeRequest& a, const sp::Config& config, const GpuHostFacts& host) {
  const sp::OutputOptions output = transcode_options(a, config).output;
  const sp::OutputPlan plan = sp::plan_output(output);
  const std::string name = plan.encoder->name;
  if (name != "libx264" && name != "libx265") return {};
  if (output.encoder == sp::EncoderChoice::software || !sp::nvenc_counterpart(plan.encoder)) return name;
  if (output.encoder == sp::EncoderChoice::nvenc) return {};
  return sp::known_without_nvenc(host.nvenc_cache, host.gpus) ? name : std::string();
}

// The distinct GPUs the request lists, in its order, as the run parses the
// list (a GPU that is not there throws: the run's to refuse, with all of them).
std::vector<int> listed_gpus(const std::string& devices, int visible) {
  std::vector<int> listed;
  std::set<int> seen;
  for (int device : sp::parse_device_list(devices, std::max(visible, 0)))
    if (seen.insert(device).second) listed.push_back(device);
  return listed;
}

// Every GPU of the host, not only those a run lists: the driver's order need not be CUDA's.
bool gpu_costs_hold_on_every_gpu(const GpuHostFacts& host) {
  return std::all_of(host.gpus.begin(), host.gpus.end(),
                     [](const sp::DriverGpu& gpu) { return sp::gpu_costs_hold_on(gpu.model); });
}

// The chain's GPU time and the encoder's rate, where both are known, for a run on `gpus` GPUs.
sp::GpuNeedQuestion gpu_need_question(const TranscodeRequest& a, const sp::Config& config, const sp::InputLength& input,
                                      int gpus, const GpuHostFacts& host) {
  sp::GpuNeedQuestion q;
  q.gpus_listed = gpus;
  q.cores = host.cores;
  q.input = input.size;
  q.chain = sp::chain_gpu_cost(config, input.size);
  if (q.chain) q.software_encoder = sure_software_encoder(a, config, host);
  return q;
}

AutoDevices narrowed(const TranscodeRequest& a, const GpuHostFacts& host) {
  const std::vector<int> listed = listed_gpus(a.devices, host.visible);
  if (listed.size() < 2 || !gpu_costs_hold_on_every_gpu(host)) return {a.devices, {}};
  const sp::Config config = sp::load_config(a.config_path);
  const sp::InputLength input = sp::probe_input_length(a.input);
  const sp::GpuNeedQuestion q = gpu_need_question(a, config, input, int(listed.size()), host);
  const sp::GpuNeed need = sp::gpus_needed(q);
  if (need.gpus >= q.gpus_listed) return {a.devices, {}};
  std::string devices;
  for (int i = 0; i < need.gpus; ++i) {
    if (i) devices += ',';
    devices += std::to_string(listed[size_t(i)]);
  }
  return {devices, need.why};
}

}  // namespace

GpuHostFacts gpu_host_facts() {
  GpuHostFacts host;
  host.gpus = sp::driver_gpus();
  host.visible = sp::gpus_visible_without_driver(host.gpus);
  host.cores = sp::usable_cores();
  host.nvenc_cache = sp::gpus_without_nvenc_path();
  return host;
}

AutoDevices auto_devices(const TranscodeRequest& a, const GpuHostFacts& host) {
  if (a.jobs != TranscodeRequest::kJobsAuto || a.devices.empty() || a.backend == "cpu" || !a.manifest.empty() ||
      host.gpus.empty() || is_batch(a) || reads_one_stream(a))
    return {a.devices, {}};
  try {
    return narrowed(a, host);
  } catch (const std::exception&) {
    return {a.devices, {}};  // a config, input or output the run refuses: its own check says so
  }
}

double warmup_weight(const TranscodeRequest& a, const sp::Config& config, const sp::InputLength& input, int gpus,
                     const GpuHostFacts& host) {
  // What NVDEC decodes on every GPU of these kinds; anything else decodes on the cores the encoders need.
  static const std::set<std::string> kNvdecCodecs = {"h264", "hevc", "av1", "vp9"};
  if (gpus < 1 || a.backend == "cpu" || a.hwdec == "none" || !kNvdecCodecs.count(input.codec) || host.gpus.empty() ||
      !gpu_costs_hold_on_every_gpu(host))
    return 1;
  try {
    return sp::warmup_weight(gpu_need_question(a, config, input, gpus, host));
  } catch (const std::exception&) {
    return 1;  // an output the run refuses: its own check says so
  }
}

void choose_auto_devices(TranscodeRequest& request, const GpuHostFacts& host) {
  if (!sp::kBuildHasCuda) return;
  const AutoDevices chosen = auto_devices(request, host);
  if (chosen.reason.empty()) return;
  sp::log_info("--jobs auto: {} (--devices {})", chosen.reason, chosen.devices);
  request.devices = chosen.devices;
  request.devices_auto_reason = chosen.reason;
}

}  // namespace detail

void choose_auto_devices(TranscodeRequest& request) {
  // Only a request it can narrow reads the host's GPUs.
  if (!sp::kBuildHasCuda || request.jobs != TranscodeRequest::kJobsAuto || request.devices.empty()) return;
  detail::choose_auto_devices(request, detail::gpu_host_facts());
}

}  // namespace stylepipe
