#pragma once
// From the public requests to the orchestration's options (api/ only).
#include <string>

#include "orchestration/bench.h"
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

}  // namespace stylepipe::detail
