#include "orchestration/auto_jobs.h"

extern "C" {
#include <libavformat/avformat.h>
}

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "orchestration/keyframe_input.h"

namespace sp {
namespace {

// Workers per GPU: four reached the encoders' bound on one H100 (eight were
// slower); NVDEC's engines (7 on an H100) were never the limit.
constexpr int kWorkersPerGpu = 4;
// Cores a worker's software encoder keeps busy (x264 ultrafast, 1080p); on
// the CPU backend the stages take the cores too, so a worker needs more.
constexpr int kCoresPerGpuWorker = 8;
constexpr int kCoresPerCpuWorker = 16;
// Input per worker: a worker's start (0.5-0.8 s) stays a few percent of its
// segment. A temporal stage starts cold in each segment (and decodes its
// warm-up frames first), so it gets longer segments.
constexpr double kSecondsPerWorker = 20;
constexpr double kSecondsPerTemporalWorker = 60;

// The duration the container's header gives, without probing its streams,
// which decodes frames (measured on 320x240 MP4 clips: 0.2-0.3 ms a clip
// against 1.2-1.6 ms, more at larger sizes; a batch asks it of every clip).
// -1 where the header has none (MPEG-TS) or the file does not open.
double header_seconds(const std::string& path) {
  AVFormatContext* format = nullptr;
  if (avformat_open_input(&format, path.c_str(), nullptr, nullptr) < 0) return -1;  // frees `format`
  const double seconds = format->duration > 0 ? double(format->duration) / AV_TIME_BASE : -1;
  avformat_close_input(&format);
  return seconds;
}

}  // namespace

AutoJobs choose_jobs(const AutoJobsHost& host) {
  const int by_devices = host.gpus > 0 ? host.gpus * kWorkersPerGpu : INT_MAX;
  const int by_cores = std::max(1, host.cores / (host.gpus > 0 ? kCoresPerGpuWorker : kCoresPerCpuWorker));
  const double per_worker = host.temporal ? kSecondsPerTemporalWorker : kSecondsPerWorker;
  const int by_length = host.input_seconds < 0 ? INT_MAX : workers_for_length(host.input_seconds, host.temporal);
  AutoJobs a;
  a.jobs = std::max(1, std::min({by_devices, by_cores, by_length}));
  std::string devices = host.gpus > 0 ? fmt::format("{} GPU{} x {}", host.gpus, host.gpus == 1 ? "" : "s", kWorkersPerGpu)
                                      : std::string("the CPU backend");
  std::string length = host.input_seconds < 0 ? std::string("length unknown")
                                              : fmt::format("{:.0f} s / {:.0f} s{}", host.input_seconds, per_worker,
                                                            host.temporal ? " (temporal stages)" : "");
  a.why = fmt::format("{} worker{}: {}, {} cores / {}, {}", a.jobs, a.jobs == 1 ? "" : "s", devices, host.cores,
                      host.gpus > 0 ? kCoresPerGpuWorker : kCoresPerCpuWorker, length);
  return a;
}

int workers_for_length(double input_seconds, bool temporal) {
  return std::max(1, int(input_seconds / (temporal ? kSecondsPerTemporalWorker : kSecondsPerWorker)));
}

double probe_input_seconds(const std::string& path) {
  if (const double seconds = header_seconds(path); seconds > 0) return seconds;
  const VideoInput in = open_video_input(path);
  if (in.format->duration > 0) return double(in.format->duration) / AV_TIME_BASE;
  if (in.video->duration > 0) return double(in.video->duration) * av_q2d(in.video->time_base);
  return -1;
}

}  // namespace sp
