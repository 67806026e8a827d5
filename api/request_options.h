#pragma once
// From the public requests to the orchestration's options (api/ only).
#include <string>

#include "orchestration/auto_jobs.h"
#include "orchestration/bench.h"
#include "orchestration/segment_plan.h"
#include "orchestration/transcode.h"
#include "pipeline/config.h"
#include "stylepipe/tools.h"
#include "stylepipe/transcode.h"

namespace stylepipe::detail {

sp::Size parse_size(const std::string& text, const std::string& flag);
sp::PixelFormat parse_pixel_format(const std::string& text, const std::string& flag);
// The config's defaults, overridden by the request's fields.
sp::TranscodeOptions transcode_options(const TranscodeRequest& request, const sp::Config& config);
sp::BenchOptions bench_options(const BenchRequest& request);
std::vector<sp::StageSpec> stage_specs(const sp::Config& config);
// --jobs auto's view of the host: its cores, and the distinct GPUs the request
// uses (--devices, else GPU 0; none on the CPU backend). Leaves the input's
// length and the chain's warm-up to the caller.
sp::AutoJobsHost auto_jobs_host(const TranscodeRequest& request);
// What `run --jobs N` plans (make_plan) and gives its workers (their own
// flags override the plan's defaults).
sp::PlanRequest plan_request(const TranscodeRequest& request, int jobs);
sp::WorkerOverrides worker_overrides(const TranscodeRequest& request);
// The input is read as one stream from its start (a pipe, a device,
// --frames, --start, --duration): it cannot be cut into segments.
bool reads_one_stream(const TranscodeRequest& request);

}  // namespace stylepipe::detail
