#include "pipeline/run_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include <time.h>
#include <unistd.h>

#include "pipeline/whole_file.h"

namespace sp {

namespace {
const std::chrono::steady_clock::time_point g_process_start = std::chrono::steady_clock::now();
}

std::chrono::steady_clock::time_point process_start_time() { return g_process_start; }

double seconds_since_process_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_process_start).count();
}

double exec_to_process_start_seconds() {
  // /proc/self/stat's 22nd field: the start in clock ticks since boot, against CLOCK_BOOTTIME.
  static const double seconds = [] {
    timespec boot{};
    clock_gettime(CLOCK_BOOTTIME, &boot);
    const double now_since_boot = double(boot.tv_sec) + boot.tv_nsec * 1e-9 - seconds_since_process_start();
    const std::string text = read_whole_file("/proc/self/stat").value_or("");
    const size_t name_end = text.rfind(')');
    if (name_end == std::string::npos) return -1.0;
    std::istringstream fields(text.substr(name_end + 2));
    std::string field;
    for (int i = 3; i < 22 && fields >> field;) ++i;  // fields 3..21
    unsigned long long start_ticks = 0;
    if (!(fields >> start_ticks)) return -1.0;
    return std::max(0.0, now_since_boot - double(start_ticks) / double(sysconf(_SC_CLK_TCK)));
  }();
  return seconds;
}


double Samples::percentile(double p) const {
  if (values_.empty()) return 0;
  std::vector<double> sorted = values_;
  std::sort(sorted.begin(), sorted.end());
  const size_t rank = size_t(std::ceil(p / 100.0 * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

double Samples::max() const { return values_.empty() ? 0 : *std::max_element(values_.begin(), values_.end()); }

double Samples::mean() const {
  return values_.empty() ? 0 : std::accumulate(values_.begin(), values_.end(), 0.0) / values_.size();
}

nlohmann::json Samples::summary() const {
  return {{"count", count()}, {"p50", median()}, {"p95", percentile(95)}, {"p99", percentile(99)},
          {"max", max()},     {"mean", mean()}};
}

void RunStats::add_frame(const FrameTimings& t) {
  upload_ms.add(t.upload_ms);
  convert_in_ms.add(t.convert_in_ms);
  convert_out_ms.add(t.convert_out_ms);
  download_ms.add(t.download_ms);
  for (size_t i = 0; i < t.stage_ms.size() && i < stages.size(); ++i) stages[i].ms.add(t.stage_ms[i]);
}

static nlohmann::json choice_json(const Choice& c) {
  nlohmann::json j = {{"name", c.name}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  return j;
}

nlohmann::json AutoJobsChoice::to_json() const {
  nlohmann::json j = {{"workers", workers}, {"reason", reason}, {"devices", devices}};
  if (!devices_reason.empty()) j["devices_reason"] = devices_reason;
  return j;
}

nlohmann::json RunStats::to_json() const {
  nlohmann::json stage_list = nlohmann::json::array();
  for (const auto& s : stages) {
    nlohmann::json j = {{"name", s.name}, {"ms", s.ms.summary()}};
    for (const auto& [k, v] : s.counters) j["counters"][k] = v.summary();
    stage_list.push_back(j);
  }
  const double fps = wall_seconds > 0 ? frames_out / wall_seconds : 0;
  const double per_frame = frames_out > 0 ? 1.0 / frames_out : 0;
  nlohmann::json j = {
      {"result", result},
      {"input", input},
      {"output", output},
      {"backend", choice_json(backend)},
      {"decoder", choice_json(decoder)},
      {"encoder", choice_json(encoder)},
      {"frames", {{"in", frames_in}, {"out", frames_out}, {"dropped", frames_dropped},
                 {"lead_in", frames_lead_in}, {"on_cpu_at_startup", frames_on_cpu_at_startup}}},
      {"wall_seconds", wall_seconds},
      {"first_frame_seconds", first_frame_seconds},
      {"fps", fps},
      {"stages", stage_list},
      {"stage_chain", stage_chain},
      {"steps_ms",
       {{"upload", upload_ms.summary()},
        {"convert_in", convert_in_ms.summary()},
        {"convert_out", convert_out_ms.summary()},
        {"download", download_ms.summary()}}},
      {"latency_ms", latency_ms.summary()},
      {"pool",
       {{"hits", pool.hits},
        {"misses", pool.misses},
        {"freed", pool.freed},
        {"buffers_live", pool.buffers_live},
        {"bytes_live", pool.bytes_live},
        {"high_water_bytes", pool.high_water_bytes}}},
      {"stage_lanes", {{"lanes", stage_lanes}, {"extra_bytes", extra_lane_bytes}}},
      {"frame_graphs", {{"captured", traffic.frame_graphs_captured}, {"replayed", traffic.frame_graphs_replayed}}},
      {"transfer_bytes",
       {{"host_to_device", traffic.host_to_device_bytes},
        {"device_to_host", traffic.device_to_host_bytes},
        {"host_copy", traffic.host_copy_bytes},
        {"host_to_device_per_frame", traffic.host_to_device_bytes * per_frame},
        {"device_to_host_per_frame", traffic.device_to_host_bytes * per_frame}}},
      {"warnings", warnings},
  };
  if (decoder_kept) j["decoder"]["kept"] = true;
  std::vector<StartupStep> steps = startup;
  if (first_frame_seconds >= 0) steps.push_back({"first frame written", first_frame_seconds});
  std::stable_sort(steps.begin(), steps.end(), [](const StartupStep& a, const StartupStep& b) { return a.seconds < b.seconds; });
  const double exec = exec_to_process_start_seconds();
  nlohmann::json since_exec = nlohmann::json::array({{{"step", "libraries loaded (static initialization)"}, {"seconds", exec}}});
  for (const StartupStep& s : steps) since_exec.push_back({{"step", s.step}, {"seconds", s.seconds + exec}});
  j["startup_seconds"] = since_exec;
  if (cuda_device >= 0) j["cuda_device"] = {{"ordinal", cuda_device}, {"pci_bus_id", cuda_device_pci_bus_id}};
  if (timeline.enabled()) j["timeline"] = timeline.to_json();
  if (jobs_auto) j["jobs_auto"] = jobs_auto->to_json();
  return j;
}

}  // namespace sp
