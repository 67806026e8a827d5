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
  else if (options_.gpus_without_nvenc) why = kNoNvencEngine;
  else if (!options_.gpu_in_use) why = "the CPU backend is in use";
  else why = probe_nvenc(nvenc);
  if (!why) {
    plan_.encoder = nvenc;
    return;
  }
  if (options_.encoder == EncoderChoice::nvenc) throw Error(ExitCode::unavailable, name_ + ": --encoder nvenc: " + *why);
  encoder_fallback_reason_ = *why;
  if (nvenc && (options_.gpu_in_use || options_.gpus_without_nvenc))
    log_info("{}: encoding with {}: {}", name_, plan_.encoder->name, *why);
}

namespace {

// GPUs found to have no NVENC engine (a datacenter GPU's hardware), by
// ordinal: a batch asks each device once, not once per clip (~50 ms each, and
// contended when 16 workers ask at once). The mutex is held while a device is
// asked early (learn_nvenc_engine), so that a writer waits for that answer
// instead of asking again.
std::mutex engine_mutex;
std::set<int> engineless_devices, devices_asked_early, devices_looked_up;

// Whether `device` is known to have no NVENC engine: found so by this
// process, or listed by an earlier one (gpus_without_nvenc_path). Call with
// engine_mutex held.
bool known_without_engine(int device) {
  if (engineless_devices.count(device)) return true;
  if (!devices_looked_up.insert(device).second) return false;
  try {
    const std::string path = gpus_without_nvenc_path();
    if (path.empty() || !listed_without_nvenc(path, cuda_device_identity(device))) return false;
    engineless_devices.insert(device);
    log_debug("GPU {}: {}, as {} says", device, kNoNvencEngine, path);
    return true;
  } catch (const std::exception& e) {
    log_debug("GPU {}: {}", device, e.what());
    return false;
  }
}

// Call with engine_mutex held.
void found_without_engine(int device) {
  engineless_devices.insert(device);
  try {
    list_without_nvenc(gpus_without_nvenc_path(), cuda_device_identity(device));
  } catch (const std::exception& e) {
    log_debug("GPU {}: {}", device, e.what());
  }
}

// Opens `nvenc` once at `size` on the CUDA `device`; the reason when it does not open.
std::optional<std::string> try_open_nvenc(const AVCodec* nvenc, AVBufferRef* device, Size size,
                                          FfmpegLogWatch& watch) {
  CodecContextPtr probe(avcodec_alloc_context3(nvenc));
  if (!probe) throw std::bad_alloc();
  probe->width = std::max(256, size.width & ~1);
  probe->height = std::max(256, size.height & ~1);
  probe->pix_fmt = AV_PIX_FMT_YUV420P;
  probe->time_base = {1, 25};
  probe->hw_device_ctx = av_buffer_ref(device);
  watch.watch(probe.get());
  const int r = avcodec_open2(probe.get(), nvenc, nullptr);
  const std::string line = strip_log_prefix(watch.last_error());
  watch.take_errors();  // the probe's complaints are not the output's
  if (r >= 0) return std::nullopt;
  return explain_nvenc_failure(r, line);
}

}  // namespace

void MediaWriter::learn_nvenc_engine(const OutputOptions& options) {
  try {
    if (options.encoder == EncoderChoice::software) return;
    const OutputPlan plan = plan_output(options);
    const AVCodec* nvenc = plan.encoder ? nvenc_counterpart(plan.encoder) : nullptr;
    if (!nvenc) return;
    const int device = current_cuda_device();
    std::lock_guard lock(engine_mutex);
    if (!devices_asked_early.insert(device).second || known_without_engine(device)) return;
    AVBufferRef* cuda = nullptr;
    if (create_shared_cuda_device(&cuda) < 0) return;
    FfmpegLogWatch watch;
    const std::optional<std::string> why = try_open_nvenc(nvenc, cuda, {256, 256}, watch);
    av_buffer_unref(&cuda);
    if (why == kNoNvencEngine) found_without_engine(device);
    log_debug("GPU {}: NVENC: {}", device, why ? *why : "opens");
  } catch (const std::exception& e) {
    log_debug("asking for NVENC early: {}", e.what());  // the writer asks again, and reports
  }
}

// Opens the NVENC encoder once on the shared CUDA context; the reason when it
// does not open.
std::optional<std::string> MediaWriter::probe_nvenc(const AVCodec* nvenc) {
  const int device = current_cuda_device();
  {
    std::lock_guard lock(engine_mutex);
    if (known_without_engine(device)) return kNoNvencEngine;
  }
  const int r = create_shared_cuda_device(&nvenc_device_);
  if (r < 0) return "no CUDA device for NVENC (" + av_error_text(r) + ")";
  std::optional<std::string> why = try_open_nvenc(nvenc, nvenc_device_, output_size_, *log_watch_);
  if (!why) return std::nullopt;
  av_buffer_unref(&nvenc_device_);
  if (why == kNoNvencEngine) {
    std::lock_guard lock(engine_mutex);
    found_without_engine(device);
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
