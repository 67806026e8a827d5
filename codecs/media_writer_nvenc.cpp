// MediaWriter's NVENC side: whether NVENC opens here (and why not), and its
// input from device memory.
#include "codecs/media_writer.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include <mutex>
#include <set>

#include "pipeline/device.h"
#include "pipeline/log.h"

namespace sp {

// --encoder auto|nvenc: the codec's NVENC counterpart when it opens here.
void MediaWriter::choose_encoder() {
  if (options_.encoder == EncoderChoice::software || !plan_.encoder) return;
  const AVCodec* nvenc = nvenc_counterpart(plan_.encoder);
  std::optional<std::string> why;
  if (!nvenc) why = std::string("this FFmpeg has no NVENC encoder for ") + avcodec_get_name(plan_.encoder->id);
  else if (!options_.gpu_in_use) why = "the CPU backend is in use";
  else why = probe_nvenc(nvenc);
  if (!why) {
    plan_.encoder = nvenc;
    return;
  }
  if (options_.encoder == EncoderChoice::nvenc) throw Error(ExitCode::unavailable, name_ + ": --encoder nvenc: " + *why);
  encoder_fallback_reason_ = *why;
  if (nvenc && options_.gpu_in_use) log_info("{}: encoding with {}: {}", name_, plan_.encoder->name, *why);
}

namespace {

// GPUs found to have no NVENC engine (a datacenter GPU's hardware), by
// ordinal: a batch asks each device once, not once per clip (~50 ms each, and
// contended when 16 workers ask at once).
std::mutex engineless_mutex;
std::set<int> engineless_devices;

}  // namespace

// Opens the NVENC encoder once on the shared CUDA context; the reason when it
// does not open.
std::optional<std::string> MediaWriter::probe_nvenc(const AVCodec* nvenc) {
  const int device = current_cuda_device();
  {
    std::lock_guard lock(engineless_mutex);
    if (engineless_devices.count(device)) return kNoNvencEngine;
  }
  int r = create_shared_cuda_device(&nvenc_device_);
  if (r < 0) return "no CUDA device for NVENC (" + av_error_text(r) + ")";
  CodecContextPtr probe(avcodec_alloc_context3(nvenc));
  if (!probe) throw std::bad_alloc();
  probe->width = std::max(256, output_size_.width & ~1);
  probe->height = std::max(256, output_size_.height & ~1);
  probe->pix_fmt = AV_PIX_FMT_YUV420P;
  probe->time_base = {1, 25};
  probe->hw_device_ctx = av_buffer_ref(nvenc_device_);
  log_watch_->watch(probe.get());
  r = avcodec_open2(probe.get(), nvenc, nullptr);
  const std::string line = strip_log_prefix(log_watch_->last_error());
  log_watch_->take_errors();  // the probe's complaints are not the output's
  if (r >= 0) return std::nullopt;
  av_buffer_unref(&nvenc_device_);
  std::string why = explain_nvenc_failure(r, line);
  if (why == kNoNvencEngine) {
    std::lock_guard lock(engineless_mutex);
    engineless_devices.insert(device);
  }
  return why;
}

// NVENC reads the pipeline's output where the GPU made it. A picture with a
// cropped odd line stays on the host path: the surfaces must have the
// encoded size.
void MediaWriter::use_device_frames() {
  if (encoded_size_ != output_size_) {
    log_info("{}: {} takes pictures from host memory: {}x{} is cropped to even dimensions", name_,
             plan_.encoder->name, output_size_.width, output_size_.height);
    return;
  }
  int error = 0;
  device_frames_ = make_cuda_frames_pool(nvenc_device_, encoder_av_format_, output_size_.width, output_size_.height,
                                         &error);
  if (!device_frames_) {
    log_info("{}: {} takes pictures from host memory: CUDA frames of {} are unavailable ({})", name_,
             plan_.encoder->name, av_get_pix_fmt_name(encoder_av_format_), av_error_text(error));
    return;
  }
  AVCodecContext* c = encoder_.get();
  c->pix_fmt = AV_PIX_FMT_CUDA;
  c->hw_frames_ctx = av_buffer_ref(device_frames_);
  if (!c->hw_frames_ctx) throw std::bad_alloc();
  encoder_settings_ += " (device input)";
}

}  // namespace sp
