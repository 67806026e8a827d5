#include "pipeline/transcode.h"

#include <atomic>
#include <chrono>
#include <algorithm>
#include <map>
#include <variant>
#include <deque>
#include <exception>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/frame_engine.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace sp {

using Clock = std::chrono::steady_clock;

Choice select_backend(const std::string& request) {
  if (request == "cpu") return {"cpu", ""};
  std::string why;
  const bool available = cuda_device_available(&why);
  if (request == "cuda") {
    if (!available) throw Error(ExitCode::unavailable, "--backend cuda: " + why);
    return {"cuda", ""};
  }
  if (request != "auto") throw Error(ExitCode::usage, "--backend: '" + request + "' is not one of auto, cuda, cpu");
  if (available) return {"cuda", ""};
  log_info("{}: using the CPU backend", why);
  return {"cpu", why};
}

namespace {

struct ReadItem {
  MediaItem media;
  Clock::time_point read_at;
};

struct WriteItem {
  std::optional<EngineFrame> frame;
  int64_t pts = 0, duration = 0;
  Clock::time_point read_at;
  MediaItem packet;  // kind == packet when this item carries one
};

// The first failure of any thread; the others stop when it is set.
class FailureLatch {
 public:
  void set(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = e;
    failed_ = true;
  }
  bool failed() const { return failed_.load(); }
  std::exception_ptr error() const {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  mutable std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

struct FrameMeta {
  int64_t pts = 0, duration = 0;
  Clock::time_point read_at;
};

class Transcoder {
 public:
  Transcoder(const TranscodeOptions& o, RunStats& stats, std::future<Choice> device, const MediaReader& reader)
      : options_(o),
        stats_(stats),
        device_(std::move(device)),
        read_queue_(startup_read_ahead(o, reader), o.overflow),
        write_queue_(o.low_latency ? 1 : o.queue_depth) {}

  int run(MediaReader& reader);

 private:
  void read_loop(MediaReader& reader);
  void write_loop();
  void process_loop(MediaReader& reader);
  static size_t startup_read_ahead(const TranscodeOptions& o, const MediaReader& reader);
  bool device_ready() const;
  void resolve_backend();
  void end_bridge_when_due();
  void start_video(const DecodedFrame& frame, MediaReader& reader);
  void build_engine(Size input, PixelFormat format, ColorSpec color);
  void submit(MediaItem& item, Clock::time_point read_at);
  void flush_ready(bool wait_all);
  void forward(WriteItem item);
  void retire_engine();
  void record_stage_counters();

  const TranscodeOptions& options_;
  RunStats& stats_;
  std::future<Choice> device_;  // the backend, once the device has started
  Backend backend_ = Backend::cpu;
  bool bridging_ = false;  // frames go through the CPU while the GPU starts
  double last_bridged_frame_ms_ = 0;
  BufferPool pool_;
  BoundedQueue<ReadItem> read_queue_;
  BoundedQueue<WriteItem> write_queue_;
  FailureLatch failure_;
  std::unique_ptr<MediaWriter> writer_;
  std::unique_ptr<FrameEngine> engine_;
  EngineFormats formats_;
  Size output_size_;
  std::deque<std::variant<int64_t, MediaItem>> pending_;  // frame tags and packets in output order
  std::map<int64_t, FrameMeta> meta_;
  int64_t next_tag_ = 0;
  int64_t frames_written_ = 0;
  double media_seconds_ = 0;
  std::unique_ptr<ProgressReporter> progress_;
  std::mutex stats_mutex_;
  AVRational time_base_{1, 1};
};

void Transcoder::read_loop(MediaReader& reader) {
  try {
    for (;;) {
      if (interrupted() || failure_.failed()) break;
      MediaItem item;
      if (!reader.next(item)) break;
      if (item.kind == MediaItem::Kind::video) ++stats_.frames_in;
      read_queue_.push(ReadItem{std::move(item), Clock::now()});
    }
  } catch (...) {
    failure_.set(std::current_exception());
  }
  read_queue_.close();
}

void Transcoder::write_loop() {
  try {
    while (auto item = write_queue_.pop()) {
      if (failure_.failed()) continue;  // drain without writing
      if (item->frame) {
        // The pooled picture goes back to the pool when the encoder lets go of it.
        writer_->write_video(item->frame->picture, item->pts, item->duration,
                             std::make_shared<PooledBuffer>(std::move(item->frame->storage)));
        const double latency = std::chrono::duration<double, std::milli>(Clock::now() - item->read_at).count();
        std::lock_guard lock(stats_mutex_);
        stats_.latency_ms.add(latency);
        stats_.add_frame(item->frame->timings);
        ++frames_written_;
        stats_.frames_out = frames_written_;
        media_seconds_ = item->pts * av_q2d(time_base_);
        progress_->update(frames_written_, media_seconds_);
      } else {
        writer_->write_packet(item->packet.packet);
      }
    }
  } catch (...) {
    failure_.set(std::current_exception());
    write_queue_.close();
  }
}

void Transcoder::build_engine(Size input, PixelFormat format, ColorSpec color) {
  std::vector<StageSpec> stages = options_.stages;
  retire_engine();
  pool_.trim_except(input.width, input.height);
  auto make = [&](std::vector<StageSpec> specs) {
    return backend_ == Backend::cuda
               ? make_cuda_engine(std::move(specs), pool_, options_.low_latency ? 1 : options_.frames_in_flight,
                                  options_.low_latency)
               : make_cpu_engine(std::move(specs), pool_);
  };
  formats_.input_size = input;
  formats_.input_format = format;
  formats_.input_color = color;
  engine_ = make(stages);
  Size out = engine_->configure(formats_);
  if (writer_ && out != output_size_) {
    // The encoder keeps its size: fit the new chain output to it.
    log_warning("input size changed to {}x{}: chain output {}x{} is scaled to the encoder's {}x{}", input.width,
                input.height, out.width, out.height, output_size_.width, output_size_.height);
    const StageDescriptor* scale = StageRegistry::instance().find("scale");
    if (!scale) throw Error(ExitCode::internal, "the scale stage is not linked in");
    StageSpec fit{"scale", default_params(scale->params)};
    fit.params.set("width", int64_t(output_size_.width));
    fit.params.set("height", int64_t(output_size_.height));
    stages.push_back(std::move(fit));
    engine_ = make(stages);
    out = engine_->configure(formats_);
  }
  std::lock_guard lock(stats_mutex_);
  if (stats_.stages.size() != engine_->chain().size()) {
    stats_.stages.resize(engine_->chain().size());
    for (size_t i = 0; i < engine_->chain().size(); ++i) stats_.stages[i].name = engine_->chain().name(i);
  }
}

// Keeps the engine's transfer counters in the stats before it goes away.
void Transcoder::retire_engine() {
  if (!engine_) return;
  const EngineTraffic t = engine_->traffic();
  stats_.traffic.host_to_device_bytes += t.host_to_device_bytes;
  stats_.traffic.device_to_host_bytes += t.device_to_host_bytes;
  stats_.traffic.host_copy_bytes += t.host_copy_bytes;
  engine_.reset();
}

void Transcoder::record_stage_counters() {
  const StageChain& chain = engine_->chain();
  std::lock_guard lock(stats_mutex_);
  for (size_t i = 0; i < chain.size() && i < stats_.stages.size(); ++i)
    for (const auto& [name, value] : chain.counters(i)) stats_.stages[i].counters[name].add(value);
}

// While the device starts (a CUDA context takes ~0.2 s), the decoder runs
// ahead into a deeper queue instead of leaving the cores idle; the queue
// shrinks to its configured depth once the engine exists. Live input keeps
// its depth: reading ahead would only add latency. So does NVDEC, whose
// surfaces are few (and the GPU starts with it anyway).
size_t Transcoder::startup_read_ahead(const TranscodeOptions& o, const MediaReader& reader) {
  const VideoStreamInfo& video = reader.video();
  const size_t depth = o.low_latency ? 1 : size_t(o.queue_depth);
  if (o.low_latency || reader.hardware_decoder_attached()) return depth;
  constexpr double kBudgetBytes = 256.0 * 1024 * 1024;
  const double frame_bytes = std::max(1.0, 1.5 * video.size.width * video.size.height);
  return std::clamp(size_t(kBudgetBytes / frame_bytes), depth, size_t(128));
}

bool Transcoder::device_ready() const {
  return !device_.valid() || device_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

void Transcoder::resolve_backend() {
  if (!device_.valid()) return;
  stats_.backend = device_.get();
  backend_ = stats_.backend.name == "cuda" ? Backend::cuda : Backend::cpu;
}

// Starting the GPU costs ~0.2 s (driver and context), which would hold the
// encoder back. With `--backend auto` the first frames of a chain without
// temporal state go through the CPU meanwhile: every stage's CPU path gives
// the GPU's result, so the output is the same, only earlier.
void Transcoder::start_video(const DecodedFrame& frame, MediaReader& reader) {
  const PlanarView v = frame.view();
  log_debug("first frame decoded");
  // (NVENC, with --encoder auto or nvenc, is chosen when the encoder opens: it needs the GPU up.)
  bridging_ = options_.backend == "auto" && !options_.low_latency && !v.on_device &&
              options_.output.encoder == EncoderChoice::software && !device_ready();
  if (!bridging_) resolve_backend();
  formats_.output_format = PixelFormat::yuv420p;
  build_engine({v.width, v.height}, v.format, frame.color);
  if (bridging_ && engine_->chain().any_temporal()) {
    bridging_ = false;  // its state would not carry over to the GPU
    resolve_backend();
    build_engine({v.width, v.height}, v.format, frame.color);
  }
  output_size_ = engine_->chain().output_size();
  read_queue_.set_capacity(options_.low_latency ? 1 : options_.queue_depth);
  log_debug("engine built");
  OutputOptions output = options_.output;
  output.gpu_in_use = backend_ == Backend::cuda;
  writer_ = std::make_unique<MediaWriter>(output, reader.video(), output_size_, reader);
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
  time_base_ = reader.video().time_base;
}

void Transcoder::forward(WriteItem item) {
  if (!write_queue_.push(std::move(item)) && !failure_.failed())
    throw Error(ExitCode::internal, "writer stopped unexpectedly");
}

// Hands finished frames and the packets queued behind them to the writer, in
// input order. With wait_all, waits for every frame in flight.
void Transcoder::flush_ready(bool wait_all) {
  while (!pending_.empty()) {
    if (auto* packet = std::get_if<MediaItem>(&pending_.front())) {
      WriteItem w;
      w.packet = std::move(*packet);
      pending_.pop_front();
      forward(std::move(w));
      continue;
    }
    const bool must_wait = wait_all || !engine_->can_submit();
    if (!must_wait && !engine_->oldest_ready()) return;
    EngineFrame done = engine_->take_oldest();
    record_stage_counters();
    const int64_t tag = std::get<int64_t>(pending_.front());
    pending_.pop_front();
    const FrameMeta m = meta_.at(tag);
    meta_.erase(tag);
    WriteItem w;
    w.frame = std::move(done);
    w.pts = m.pts;
    w.duration = m.duration;
    w.read_at = m.read_at;
    forward(std::move(w));
  }
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
  if (backend_ == Backend::cuda) build_engine(formats_.input_size, formats_.input_format, formats_.input_color);
}

void Transcoder::submit(MediaItem& item, Clock::time_point read_at) {
  const PlanarView v = item.frame.view();
  if (!engine_) {
    throw Error(ExitCode::internal, "engine missing");
  }
  end_bridge_when_due();
  if (Size{v.width, v.height} != formats_.input_size || v.format != formats_.input_format) {
    flush_ready(true);
    log_info("input changed to {}x{} {} at frame {}: reconfiguring the stages", v.width, v.height,
             to_string(v.format), stats_.frames_in);
    const auto out_format = formats_.output_format;
    const auto out_color = formats_.output_color;
    formats_.output_format = out_format;
    formats_.output_color = out_color;
    build_engine({v.width, v.height}, v.format, item.frame.color);
  }
  while (!engine_->can_submit()) flush_ready(false);
  const int64_t tag = next_tag_++;
  meta_[tag] = FrameMeta{item.frame.pts, item.frame.duration, read_at};
  FrameInfo info;
  info.index = tag;
  info.time_seconds = item.frame.pts * av_q2d(time_base_);
  // A decoder surface in device memory stays alive until its frame is done.
  std::shared_ptr<void> surface;
  if (v.on_device) surface = std::make_shared<FramePtr>(std::move(item.frame.frame));
  const auto submitted_at = Clock::now();
  engine_->submit(v, info, tag, false, std::move(surface));
  pending_.push_back(tag);
  if (bridging_) {
    last_bridged_frame_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - submitted_at).count();
    std::lock_guard lock(stats_mutex_);
    ++stats_.frames_on_cpu_at_startup;
  }
}

void Transcoder::process_loop(MediaReader& reader) {
  while (auto item = read_queue_.pop()) {
    if (failure_.failed()) continue;
    if (item->media.kind == MediaItem::Kind::video) {
      if (!writer_) {
        start_video(item->media.frame, reader);
        // Packets read before the first frame could not be written before the header.
        flush_ready(false);
      }
      submit(item->media, item->read_at);
    } else if (item->media.kind == MediaItem::Kind::packet) {
      pending_.push_back(std::move(item->media));
      if (writer_) flush_ready(false);
    }
    if (writer_) flush_ready(false);
  }
  if (writer_ && !failure_.failed()) flush_ready(true);
}

int Transcoder::run(MediaReader& reader) {
  const auto t0 = Clock::now();
  progress_ = std::make_unique<ProgressReporter>(options_.progress, reader.video().duration_seconds,
                                                 reader.video().frame_count_estimate);
  // Live input: start the device before taking frames, so that the first
  // ones do not wait in our queue for it (a live source waits in its pipe).
  if (options_.low_latency) {
    try {
      resolve_backend();
    } catch (...) {
      failure_.set(std::current_exception());
    }
  }
  std::thread read_thread([&] { read_loop(reader); });
  std::thread write_thread([&] { write_loop(); });
  try {
    process_loop(reader);
  } catch (...) {
    failure_.set(std::current_exception());
  }
  read_queue_.close();
  write_queue_.close();
  read_thread.join();
  write_thread.join();
  retire_engine();
  stats_.decoder = {reader.video().codec_name + (reader.decodes_on_device() ? " (nvdec)" : ""),
                    reader.software_decode_reason()};
  if (device_.valid()) {
    try {
      resolve_backend();  // no frame came: still report the backend, or its failure
    } catch (...) {
      failure_.set(std::current_exception());
    }
  }

  // Whatever happened, a started output gets its trailer so it plays.
  std::exception_ptr finish_error;
  if (writer_) {
    try {
      writer_->finish();
    } catch (...) {
      finish_error = std::current_exception();
    }
  }
  log_debug("output finalized");
  stats_.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  stats_.frames_dropped = int64_t(read_queue_.dropped());
  stats_.pool = pool_.stats();
  progress_->finish(frames_written_, media_seconds_);

  if (auto e = failure_.error() ? failure_.error() : finish_error) {
    try {
      std::rethrow_exception(e);
    } catch (const Error& err) {
      log_error("{}", err.what());
      stats_.result = err.what();
      return int(err.code());
    } catch (const std::exception& err) {
      log_error("internal error: {}", err.what());
      stats_.result = err.what();
      return int(ExitCode::internal);
    }
  }
  if (interrupted()) {
    log_warning("interrupted: wrote {} frames, the output was finalized", frames_written_);
    stats_.result = "interrupted";
    return int(ExitCode::interrupted);
  }
  if (auto err = reader.data_error()) {
    log_error("{}", *err);
    stats_.result = *err;
    return int(ExitCode::data_error);
  }
  if (!writer_) {
    log_error("{}: no video frames were decoded", options_.input.url);
    stats_.result = "no video frames";
    return int(ExitCode::data_error);
  }
  return 0;
}

}  // namespace

// NVDEC decodes into GPU memory, so it needs the CUDA backend: known only
// once the device has answered.
static void settle_hardware_decoding(InputOptions& input, std::future<Choice>& device) {
  if (input.hwdec == HwDecode::none) return;
  const Choice backend = device.get();
  std::promise<Choice> known;
  known.set_value(backend);
  device = known.get_future();
  if (backend.name == "cuda") return;
  const std::string why = "the CPU backend is in use" + (backend.reason.empty() ? "" : " (" + backend.reason + ")");
  if (input.hwdec == HwDecode::nvdec) throw Error(ExitCode::unavailable, "--hwdec nvdec: " + why);
  input.hwdec = HwDecode::none;
  input.software_decode_reason = why;
}

int run_transcode(const TranscodeOptions& options, RunStats& stats) {
  MediaWriter::preflight(options.output);
  // Device start-up (driver and context) overlaps with probing the input.
  std::future<Choice> device = std::async(std::launch::async, [&] {
    Choice backend = select_backend(options.backend);
    if (backend.name == "cuda") start_cuda_context();
    log_debug("device ready");
    return backend;
  });
  InputOptions input = options.input;
  input.frames_held = (options.low_latency ? 1 : options.queue_depth) + options.frames_in_flight + 2;
  settle_hardware_decoding(input, device);
  std::optional<MediaReader> opened;
  try {
    opened.emplace(input);
  } catch (...) {
    device.wait();  // its errors come second
    throw;
  }
  MediaReader& reader = *opened;
  log_debug("input open");
  stats.input = options.input.url;
  stats.output = options.output.url;
  stats.decoder.name = reader.video().codec_name;
  Transcoder transcoder(options, stats, std::move(device), reader);
  const int code = transcoder.run(reader);
  if (!options.stats_json_path.empty()) {
    std::ofstream out(options.stats_json_path);
    out << stats.to_json().dump(2) << "\n";
    if (!out) {
      log_error("{}: cannot write stats", options.stats_json_path);
      return code ? code : int(ExitCode::io_error);
    }
  }
  return code;
}

}  // namespace sp
