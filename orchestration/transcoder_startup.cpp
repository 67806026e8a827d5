// The transcoder's start-up: the read-ahead while the device starts, the
// backend once it is known, the first frame, and the CPU bridge.
#include "orchestration/transcoder.h"

#include <algorithm>

#include "codecs/media_writer.h"
#include "codecs/nvenc.h"
#include "pipeline/device.h"
#include "pipeline/log.h"
#include "pipeline/stage_chain.h"

namespace sp::detail {

// While the device starts (a CUDA context takes ~0.2 s), the decoder runs
// ahead into a deeper queue instead of leaving the cores idle; the queue
// shrinks to its configured depth once the engine exists. Live input keeps
// its depth: reading ahead would only add latency. So does NVDEC, whose
// surfaces are few (and the GPU starts with it anyway).
size_t Transcoder::startup_read_ahead(const TranscodeOptions& o, const MediaReader& reader) {
  const VideoStreamInfo& video = reader.video();
  const size_t depth = size_t(o.effective_queue_depth());
  if (o.low_latency || reader.hardware_decoder_attached()) return depth;
  constexpr double kBudgetBytes = 256.0 * 1024 * 1024;
  const double frame_bytes = std::max(1.0, 1.5 * video.size.width * video.size.height);
  return std::clamp(size_t(kBudgetBytes / frame_bytes), depth, size_t(128));
}

bool Transcoder::device_ready() const {
  return !device_.valid() || device_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// Whether the encoder is settled without the GPU: software, a codec NVENC
// lacks, or a host whose GPUs are known to have no NVENC engine. NVENC itself
// needs the GPU up.
bool Transcoder::encoder_known_before_the_gpu() {
  const OutputOptions& output = options_.output;
  if (output.encoder != EncoderChoice::automatic) return output.encoder == EncoderChoice::software;
  const OutputPlan plan = plan_output(output);
  if (!plan.encoder || !nvenc_counterpart(plan.encoder)) return true;
  gpus_without_nvenc_ = known_without_nvenc(gpus_without_nvenc_path(), driver_gpus());
  return gpus_without_nvenc_;
}

void Transcoder::resolve_backend() {
  if (!device_.valid()) return;
  stats_.backend = device_.get();
  backend_ = stats_.backend.name == "cuda" ? Backend::cuda : Backend::cpu;
  if (backend_ == Backend::cuda) {
    stats_.cuda_device = current_cuda_device();
    stats_.cuda_device_pci_bus_id = cuda_device_pci_bus_id(stats_.cuda_device);
  }
}

// Starting the GPU costs 0.2-0.35 s (driver and context), which would hold
// the encoder back. With `--backend auto` the first frames go through the CPU
// meanwhile: every stage's CPU path gives the GPU's result, and a temporal
// stage hands its state over to the GPU's (Stage::hands_history_over), so the
// output is the same, only earlier. A temporal stage that cannot hand over
// waits for the device rather than configure a CPU chain only to drop it.
void Transcoder::start_video(const DecodedFrame& frame, MediaReader& reader) {
  const PlanarView v = frame.view();
  stats_.mark_startup("first frame decoded");
  log_debug("first frame decoded");
  bridging_ = options_.backend == "auto" && !options_.low_latency && !v.on_device && !device_ready() &&
              encoder_known_before_the_gpu() && hands_history_over(options_.stages);
  if (!bridging_) resolve_backend();
  formats_.output_format = PixelFormat::yuv420p;
  build_engine({v.width, v.height}, v.format, frame.color);
  output_size_ = engine_->chain().output_size();
  read_queue_.set_capacity(options_.effective_queue_depth());
  stats_.mark_startup("stages configured (plans, buffers)");
  log_debug("engine built");
  OutputOptions output = options_.output;
  output.gpu_in_use = backend_ == Backend::cuda;
  output.gpus_without_nvenc = bridging_ && gpus_without_nvenc_;
  writer_ = std::make_unique<MediaWriter>(output, reader.video(), output_size_, reader);
  stats_.mark_startup("encoder open");
  log_debug("encoder open");
  stats_.encoder.name = writer_->description();
  stats_.encoder.reason = writer_->encoder_fallback_reason();
  for (const auto& w : writer_->warnings()) stats_.warnings.push_back(w);
  if (writer_->encoder_format() != formats_.output_format ||
      writer_->encoder_color().matrix != formats_.output_color.matrix ||
      writer_->encoder_color().range != formats_.output_color.range) {
    formats_.output_format = writer_->encoder_format();
    formats_.output_color = writer_->encoder_color();
    engine_->configure(formats_);
  }
  connect_device_output();
  time_base_ = reader.video().time_base;
}

// The bridge ends once the GPU is up, or at once when a CPU frame turns out
// slow (a heavy chain is better off waiting for the device).
void Transcoder::end_bridge_when_due() {
  constexpr double kSlowFrameMs = 25;
  if (!bridging_ || (!device_ready() && last_bridged_frame_ms_ < kSlowFrameMs)) return;
  flush_ready(true);
  bridging_ = false;
  resolve_backend();
  log_debug("{} frames went through the CPU while the device started", stats_.frames_on_cpu_at_startup);
  if (backend_ != Backend::cuda) return;
  const bool cacheable = engine_cacheable_;
  std::unique_ptr<FrameEngine> cpu_engine;
  retire_engine(&cpu_engine);
  build_engine(formats_.input_size, formats_.input_format, formats_.input_color);
  engine_->take_history(*cpu_engine);
  // A batch worker's next clip may start on the CPU again.
  if (options_.engine_cache && cacheable) options_.engine_cache->keep(std::move(cpu_engine));
}

}  // namespace sp::detail
