#include "codecs/nvenc.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "codecs/ffmpeg_util.h"

extern "C" {
#include <libavutil/hwcontext.h>
}

namespace sp {

std::optional<EncoderChoice> parse_encoder_choice(const std::string& text) {
  if (text == "auto") return EncoderChoice::automatic;
  if (text == "nvenc") return EncoderChoice::nvenc;
  if (text == "software") return EncoderChoice::software;
  return std::nullopt;
}

const AVCodec* nvenc_counterpart(const AVCodec* encoder) {
  if (!encoder) return nullptr;
  switch (encoder->id) {
    case AV_CODEC_ID_H264: return avcodec_find_encoder_by_name("h264_nvenc");
    case AV_CODEC_ID_HEVC: return avcodec_find_encoder_by_name("hevc_nvenc");
    case AV_CODEC_ID_AV1: return avcodec_find_encoder_by_name("av1_nvenc");
    default: return nullptr;
  }
}

std::string explain_nvenc_failure(int error, const std::string& log_line) {
  const auto says = [&](const char* words) { return log_line.find(words) != std::string::npos; };
  // Datacenter GPUs (H100, A100, ...) have NVDEC but no NVENC engine.
  if (says("unsupported device") || says("No capable devices found") || says("no NVENC capable"))
    return kNoNvencEngine;
  // Consumer drivers cap concurrent sessions; the open fails with this status.
  if (says("out of memory") || says("incompatible client key") || says("session"))
    return "the NVENC session limit is reached";
  if (says("Cannot load") || says("driver"))
    return "the NVENC driver library is unavailable (" + log_line + ")";
  return "NVENC refused to open (" + (log_line.empty() ? av_error_text(error) : log_line) + ")";
}

std::string nvenc_preset_for(const std::string& x264_preset) {
  static const std::map<std::string, std::string> presets = {
      {"ultrafast", "p1"}, {"superfast", "p1"}, {"veryfast", "p2"}, {"faster", "p3"}, {"fast", "p4"},
      {"medium", "p5"},    {"slow", "p6"},      {"slower", "p7"},   {"veryslow", "p7"}, {"placebo", "p7"}};
  const auto it = presets.find(x264_preset);
  return it != presets.end() ? it->second : "p5";
}

void set_nvenc_options(AVDictionary** options, int crf, const std::string& preset, bool low_latency,
                       std::string* settings) {
  const std::string p = nvenc_preset_for(preset);
  av_dict_set(options, "preset", p.c_str(), 0);
  av_dict_set(options, "rc", "vbr", 0);
  av_dict_set_int(options, "cq", crf, 0);
  av_dict_set(options, "b", "0", 0);  // quality-driven: no bitrate target
  *settings += " cq " + std::to_string(crf) + " preset " + p + " (x264 " + preset + ")";
  if (low_latency) {
    av_dict_set(options, "tune", "ull", 0);
    av_dict_set(options, "delay", "0", 0);
    av_dict_set(options, "zerolatency", "1", 0);
    av_dict_set(options, "bf", "0", 0);
    av_dict_set(options, "rc-lookahead", "0", 0);
    *settings += " tune ull delay 0";
  }
}

AVBufferRef* make_cuda_frames_pool(AVBufferRef* device, AVPixelFormat format, int width, int height, int* error) {
  AVBufferRef* pool = av_hwframe_ctx_alloc(device);
  if (!pool) {
    *error = AVERROR(ENOMEM);
    return nullptr;
  }
  auto* frames = reinterpret_cast<AVHWFramesContext*>(pool->data);
  frames->format = AV_PIX_FMT_CUDA;
  frames->sw_format = format;
  frames->width = width;
  frames->height = height;
  // No initial size: the pool grows to what the pipeline holds (frames in
  // flight, the write queue, the encoder's delay) and then only recycles.
  frames->initial_pool_size = 0;
  *error = av_hwframe_ctx_init(pool);
  if (*error < 0) av_buffer_unref(&pool);
  return pool;
}

std::string gpus_without_nvenc_path() {
  namespace fs = std::filesystem;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path dir;
  if (xdg && *xdg) dir = xdg;
  else if (home && *home) dir = fs::path(home) / ".cache";
  else return {};
  return (dir / "stylepipe" / "gpus-without-nvenc").string();
}

bool listed_without_nvenc(const std::string& path, const std::string& identity) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line == identity) return true;
  return false;
}

bool known_without_nvenc(const std::string& path, const std::vector<DriverGpu>& gpus) {
  std::set<std::string> listed_uuids;  // a line is "GPU-... CUDA driver N"
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) listed_uuids.insert(line.substr(0, line.find(' ')));
  std::set<std::string> models_without;
  for (const DriverGpu& gpu : gpus)
    if (listed_uuids.count(gpu.uuid)) models_without.insert(gpu.model);
  return !gpus.empty() && std::all_of(gpus.begin(), gpus.end(), [&](const DriverGpu& gpu) {
    return models_without.count(gpu.model) > 0;
  });
}

void list_without_nvenc(const std::string& path, const std::string& identity) {
  if (path.empty() || identity.find('\n') != std::string::npos || listed_without_nvenc(path, identity)) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::ofstream(path, std::ios::app) << identity << "\n";  // one short append: whole lines even side by side
}

}  // namespace sp
