#include "stylepipe/tools.h"

#include <algorithm>
#include <fstream>
#include <optional>

#include "api/public_errors.h"
#include "api/request_options.h"
#include "orchestration/bench.h"
#include "orchestration/parallel_run.h"
#include "orchestration/preview.h"
#include "pipeline/config.h"
#include "pipeline/device.h"
#include "pipeline/log.h"
#include "pipeline/stage_docs.h"

namespace stylepipe {

size_t validate_config(const std::string& path) {
  return detail::guarded([&] { return sp::load_config(path).stages.size(); });
}

std::string config_json_schema() {
  return detail::guarded([] { return sp::config_json_schema().dump(2); });
}

std::string stages_reference(const std::string& format) {
  return detail::guarded([&] {
    if (format == "json") return sp::stages_schema_json().dump(2) + "\n";
    if (format == "markdown") return sp::stages_markdown();
    if (format == "text") return sp::stages_text();
    throw Error(ExitCode::usage, "stages reference format '" + format + "' is not text, json or markdown");
  });
}

std::string bench(const BenchRequest& request) {
  return detail::guarded([&] {
    sp::BenchOptions o = detail::bench_options(request);
    if (!request.config_path.empty()) o.stages = detail::stage_specs(sp::load_config(request.config_path));
    const nlohmann::json report = sp::run_bench(o);
    if (!request.json_path.empty()) {
      std::ofstream out(request.json_path);
      out << report.dump(2) << "\n";
      if (!out) throw sp::Error(sp::ExitCode::io_error, request.json_path + ": cannot write the bench report");
    }
    return sp::bench_table(report);
  });
}

int preview(const PreviewRequest& r) {
  return detail::guarded([&] {
    sp::PreviewRequest o;
    o.config_path = r.config_path;
    o.extra_configs = r.extra_configs;
    o.variations = r.variations;
    o.input = r.input;
    o.output = r.output;
    o.at_seconds = r.at_seconds;
    o.backend = r.backend;
    o.font = r.font;
    o.layout_json = r.layout_json;
    o.overwrite = r.overwrite;
    return sp::run_preview(o);
  });
}

bool set_log_level(const std::string& level) {
  sp::LogLevel parsed = sp::LogLevel::info;
  if (!sp::parse_log_level(level, &parsed)) return false;
  sp::set_log_level(parsed);
  return true;
}

void log_error(const std::string& message) { sp::log_error("{}", message); }

void allow_device_teardown() {
  detail::guarded([] { sp::allow_cuda_context_release(); });
}

void release_device_early() {
  detail::guarded([] { sp::release_cuda_context(); });
}

void restrict_cuda_devices(int count) {
  detail::guarded([&] { sp::restrict_cuda_visibility(count); });
}

int cuda_devices_named(const std::string& devices) {
  if (devices.empty()) return 1;
  try {
    const std::optional<std::vector<int>> named = sp::named_devices(devices);
    if (!named) return 0;
    const int largest = *std::max_element(named->begin(), named->end());
    return largest < 10000 ? largest + 1 : 0;  // beyond any host: the run refuses it
  } catch (const sp::Error&) {
    return 0;
  }
}

}  // namespace stylepipe
