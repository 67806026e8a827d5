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
// A GPU-bound chain over several GPUs: halftone_gpu_bound on 2 x H200 (32
// cores), one worker a GPU 398-400 fps on 6,150 frames and 385 on 60 s,
// two a GPU 388 and 354 (each GPU's second worker starts, 1.5 s to a first
// frame against 1.1, and warms up, at half the GPU).
constexpr int kWorkersPerGpuOfAGpuBoundChain = 1;
// Cores a worker's software encoder keeps busy (x264 ultrafast, 1080p); on
// the CPU backend the stages take the cores too, so a worker needs more.
constexpr int kCoresPerGpuWorker = 8;
constexpr int kCoresPerCpuWorker = 16;
// A short clip of a batch leaves its encoder's cores idle while it opens its
// input, decodes its first frame and opens its encoder (30 ms of a 2 s 720p30
// clip's 190 ms with 4 clips on one H200's 16 cores), so a batch runs more
// clips than a run has workers: 8 clips at a time (2 cores each) beat 4 there
// by 1.09-1.19x, where one long clip ran as fast with 2, 4 or 8 workers.
constexpr int kClipsPerGpu = 8;
constexpr int kCoresPerBatchClip = 2;
// Input per worker: at least this much, and the chain's warm-up at most
// this share of it.
constexpr double kMinSecondsPerWorker = 10;
constexpr double kMaxWarmupShare = 0.05;
// Where the header gives no frame rate, warm-up frames count as at this one.
constexpr double kAssumedFrameRate = 30;

// The stream's average frame rate; 0 where it does not say.
double average_frame_rate(const AVStream& stream) {
  const AVRational r = stream.avg_frame_rate;
  return r.num > 0 && r.den > 0 ? av_q2d(r) : 0;
}

// The duration and frame rate the container's header gives, without probing
// its streams, which decodes frames (measured on 320x240 MP4 clips: 0.2-0.3 ms
// a clip against 1.2-1.6 ms, more at larger sizes; a batch asks it of every
// clip). Seconds -1 where the header has none (MPEG-TS) or the file does not open.
InputLength header_length(const std::string& path) {
  InputLength length;
  AVFormatContext* format = nullptr;
  if (avformat_open_input(&format, path.c_str(), nullptr, nullptr) < 0) return length;  // frees `format`
  if (format->duration > 0) length.seconds = double(format->duration) / AV_TIME_BASE;
  const int video = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (video >= 0) {
    length.frame_rate = average_frame_rate(*format->streams[video]);
    length.size = {format->streams[video]->codecpar->width, format->streams[video]->codecpar->height};
    length.codec = avcodec_get_name(format->streams[video]->codecpar->codec_id);
  }
  avformat_close_input(&format);
  return length;
}

// Where the warm-up weighs less than the frames a segment encodes, how much.
std::string warmup_weighed(const AutoJobsHost& host) {
  if (host.warmup_weight >= 1) return {};
  return fmt::format(", its frames at {:.2f} of an encoded frame's cost", std::max(0.0, host.warmup_weight));
}

}  // namespace

AutoJobs choose_jobs(const AutoJobsHost& host) {
  const bool batch = host.clips > 0;
  // One input over several GPUs: no other clip's work on them.
  const bool gpus_of_its_own = !batch && host.gpus > 1;
  const bool taken_as_gpu_bound = gpus_of_its_own && host.gpu_time_unknown;
  const int per_gpu = batch ? kClipsPerGpu : taken_as_gpu_bound ? kWorkersPerGpuOfAGpuBoundChain : kWorkersPerGpu;
  const int cores_each = host.gpus == 0 ? kCoresPerCpuWorker : batch ? kCoresPerBatchClip : kCoresPerGpuWorker;
  const int by_devices = host.gpus > 0 ? host.gpus * per_gpu : INT_MAX;
  const int by_cores = std::max(1, host.cores / cores_each);
  // A batch: its clips; one input: the workers its length is worth.
  const double weighed_warmup = std::max(0.0, host.warmup_seconds) * std::clamp(host.warmup_weight, 0.0, 1.0);
  const int by_length = batch                    ? host.clips
                        : host.input_seconds < 0 ? INT_MAX
                                                 : workers_for_length(host.input_seconds, weighed_warmup);
  // Up to one worker a GPU, a segment's warm-up runs on a GPU that would
  // otherwise wait, beside the other segments: only the length's floor holds.
  const int a_worker_a_gpu = gpus_of_its_own && host.input_seconds >= 0
                                 ? std::min(host.gpus, int(host.input_seconds / kMinSecondsPerWorker))
                                 : 0;
  const int by_input = std::max(by_length, a_worker_a_gpu);
  AutoJobs a;
  a.jobs = std::max(1, std::min({by_devices, by_cores, by_input}));
  const bool raised_to_the_gpus = a.jobs > std::min({by_devices, by_cores, by_length});
  // More workers than GPUs: a multiple of them. Workers on one GPU share its
  // time, so a GPU-bound chain's 5 workers on 4 GPUs end when GPU 0's two
  // segments do: 2.5 GPUs' worth of work where 4 workers give 4.
  const int unbalanced = gpus_of_its_own && a.jobs > host.gpus ? a.jobs % host.gpus : 0;
  a.jobs -= unbalanced;
  std::string devices = host.gpus > 0 ? fmt::format("{} GPU{} x {}{}", host.gpus, host.gpus == 1 ? "" : "s", per_gpu,
                                                    taken_as_gpu_bound ? " (a chain of unbounded GPU time)" : "")
                                      : std::string("the CPU backend");
  std::string input =
      batch ? fmt::format("{} clip{}", host.clips, host.clips == 1 ? "" : "s")
      : host.input_seconds < 0
          ? std::string("length unknown")
          : fmt::format("{:.0f} s / {:.0f} s a worker{}", host.input_seconds, seconds_per_worker(weighed_warmup),
                        host.warmup_seconds > 0 ? fmt::format(" (warm-up {:.2f} s a segment{})", host.warmup_seconds,
                                                              warmup_weighed(host))
                                                : std::string());
  if (raised_to_the_gpus) input += fmt::format(", up to one a GPU: {:.0f} s a worker", kMinSecondsPerWorker);
  if (unbalanced) input += fmt::format(", {} fewer for a multiple of the GPUs", unbalanced);
  a.why = fmt::format("{} worker{}: {}, {} core{} / {}, {}", a.jobs, a.jobs == 1 ? "" : "s", devices, host.cores,
                      host.cores == 1 ? "" : "s", cores_each, input);
  return a;
}

double seconds_per_worker(double warmup_seconds) {
  return std::max(kMinSecondsPerWorker, std::max(0.0, warmup_seconds) / kMaxWarmupShare);
}

int workers_for_length(double input_seconds, double warmup_seconds) {
  return std::max(1, int(input_seconds / seconds_per_worker(warmup_seconds)));
}

double warmup_seconds_at(const Warmup& warmup, double frame_rate) {
  const double rate = frame_rate > 0 ? frame_rate : kAssumedFrameRate;
  return warmup.frames_at(rate) / rate;
}

InputLength probe_input_length(const std::string& path) {
  InputLength length = header_length(path);
  if (length.seconds > 0) return length;
  const VideoInput in = open_video_input(path);
  if (in.format->duration > 0) length.seconds = double(in.format->duration) / AV_TIME_BASE;
  else if (in.video->duration > 0) length.seconds = double(in.video->duration) * av_q2d(in.video->time_base);
  length.frame_rate = average_frame_rate(*in.video);
  length.size = {in.video->codecpar->width, in.video->codecpar->height};
  length.codec = avcodec_get_name(in.video->codecpar->codec_id);
  return length;
}

}  // namespace sp
