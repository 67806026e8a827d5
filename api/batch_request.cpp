#include "api/batch_request.h"

#include <algorithm>
#include <future>
#include <optional>
#include <set>
#include <thread>

#include "api/auto_devices.h"
#include "api/request_options.h"
#include "orchestration/auto_jobs.h"
#include "orchestration/batch.h"
#include "orchestration/output_pattern.h"
#include "orchestration/parallel_run.h"
#include "pipeline/cores.h"
#include "pipeline/device.h"
#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace stylepipe::detail {
namespace {

using sp::Error;
using sp::ExitCode;

// A batch cuts only its long clips, as `run --jobs N` would cut each: what
// belongs to one plan or one segment is refused.
void refuse_segment_flags(const TranscodeRequest& a) {
  const char* flag = !a.manifest.empty() ? "--manifest" : a.index ? "--index" : a.force ? "--force"
                     : a.segments ? "--segments"
                     : a.segment_seconds ? "--segment-seconds" : !a.workdir.empty() ? "--workdir"
                     : a.keep_segments ? "--keep-segments" : a.worker_processes ? "--worker-processes" : nullptr;
  if (flag)
    throw Error(ExitCode::usage, std::string(flag) +
                                     " goes with one input: several inputs (or an -o pattern) run --jobs clips at "
                                     "a time, and cut those long enough as `run --jobs` cuts one");
}

// What `run CLIP --jobs N` would plan and give its workers, with the batch's
// share of the cores for each encoder.
sp::LongClipRules long_clip_rules(const TranscodeRequest& a, const sp::Config& config, const sp::BatchOptions& o,
                                  const std::optional<sp::AutoJobsHost>& auto_host) {
  sp::LongClipRules rules;
  rules.auto_host = auto_host;
  rules.plan = plan_request(a, o.jobs);
  rules.worker = worker_overrides(a);
  rules.worker.threads = o.clip.output.threads;
  rules.worker.stats_json_path.clear();
  rules.warmup = sp::chain_warmup(config);
  // The GPUs the batch's clips share: those listed, or the one a CUDA run takes.
  const int gpus = rules.auto_host  ? rules.auto_host->gpus
                   : !sp::kBuildHasCuda ? 0
                                       : std::max(1, int(std::set<int>(o.devices.begin(), o.devices.end()).size()));
  rules.warmup_weight = [a, config, gpus, host = gpu_host_facts()](const sp::InputLength& length) {
    return warmup_weight(a, config, length, gpus, host);
  };
  return rules;
}

}  // namespace

bool is_batch(const TranscodeRequest& a) {
  if (!a.manifest.empty() && a.inputs.empty()) return false;
  return !a.inputs.empty() || sp::is_output_pattern(a.output) || sp::is_input_glob(a.input);
}

int run_batch(const TranscodeRequest& a) {
  refuse_segment_flags(a);
  if (a.config_path.empty() || a.output.empty())
    throw Error(ExitCode::usage, "run needs CONFIG, -i INPUT (one or more) and -o OUTPUT");
  std::vector<std::string> given = a.inputs;
  if (!a.input.empty()) given.insert(given.begin(), a.input);
  const std::vector<std::string> inputs = sp::expand_input_globs(given);
  if (inputs.size() == 1 && !sp::is_output_pattern(a.output)) {
    TranscodeRequest one = a;
    one.input = inputs.front();
    one.inputs.clear();
    return transcode(one);
  }
  sp::BatchOptions o;
  o.clips = sp::batch_clips(inputs, a.output);
  const sp::Config config = sp::load_config(a.config_path);  // parsed once, every config error before any work
  TranscodeRequest first = a;
  first.input = o.clips.front().input;
  first.output = o.clips.front().output;
  o.clip = transcode_options(first, config);
  o.jobs = std::max(1, a.jobs);
  std::optional<sp::AutoJobsHost> auto_host;
  if (a.jobs == TranscodeRequest::kJobsAuto) {  // clips side by side, as many as the GPUs and cores keep busy
    auto_host = auto_jobs_host(a);
    sp::AutoJobsHost host = *auto_host;
    host.clips = int(o.clips.size());
    const sp::AutoJobs choice = sp::choose_jobs(host);
    sp::log_info("--jobs auto: {} clip{} at a time ({})", choice.jobs, choice.jobs == 1 ? "" : "s", choice.why);
    o.jobs = choice.jobs;
  }
  std::future<void> contexts;  // each GPU's context starts while the first clips open
  if (!a.devices.empty()) {
    if (a.backend == "cpu") throw Error(ExitCode::usage, "--devices needs the CUDA backend, not --backend cpu");
    o.devices = sp::parse_device_list(a.devices, sp::cuda_device_count());
    contexts = std::async(std::launch::async, sp::start_cuda_contexts, o.devices);
  }
  // N encoders each taking every core would fight over them: each clip gets its share.
  if (o.jobs > 1 && !a.threads)
    o.clip.input.threads = o.clip.output.threads = sp::threads_each(o.jobs);
  if (o.jobs > 1 && !reads_one_stream(a)) o.long_clips = long_clip_rules(first, config, o, auto_host);
  o.fail_fast = a.fail_fast;
  o.progress = o.clip.progress;
  o.stats_json_path = a.stats_json;
  o.cancel = a.cancel;
  if (a.on_progress) o.on_progress = [&a](int64_t frames, double seconds) { a.on_progress({frames, seconds}); };
  const int code = sp::run_batch(o);
  if (contexts.valid()) contexts.wait();  // a failure to start was the clips' to report
  return code;
}

}  // namespace stylepipe::detail
