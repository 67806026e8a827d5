#include "orchestration/transcoder.h"

#include <algorithm>
#include <thread>

#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace sp::detail {

bool Transcoder::read_next(MediaReader& reader, MediaItem& item) {
  if (interrupted() || options_.stop_requested() || failure_.failed() || !reader.next(item)) return false;
  if (item.kind == MediaItem::Kind::video && !item.frame.lead_in) ++stats_.frames_in;
  return true;
}

void Transcoder::read_loop(MediaReader& reader) {
  try {
    use_cuda_device(cuda_device_);
    for (MediaItem item; read_next(reader, item); item = MediaItem{})
      read_queue_.push(ReadItem{std::move(item), Clock::now(), {}});
  } catch (...) {
    failure_.set(std::current_exception());
  }
  read_queue_.close();
}

void Transcoder::write_loop() {
  try {
    use_cuda_device(cuda_device_);
    while (auto item = write_queue_.pop()) {
      if (failure_.failed()) continue;  // drain without writing
      write_item(*item);
    }
  } catch (...) {
    failure_.set(std::current_exception());
    write_queue_.close();
  }
}

void Transcoder::write_item(WriteItem& item) {
  if (!item.frame) {
    writer_->write_packet(item.packet.packet);
    return;
  }
  FrameTimes& times = item.times;
  times.write_started = Clock::now();
  if (item.frame->picture.on_device) {
    // connect_device_output() made the owner: the writer's own frame.
    writer_->write_video(DevicePicture{item.frame->picture,
                                       std::static_pointer_cast<AVFrame>(std::move(item.frame->device_owner))},
                         item.pts, item.duration);
  } else {
    // The pooled picture goes back to the pool when the encoder lets go of it.
    writer_->write_video(item.frame->picture, item.pts, item.duration,
                         std::make_shared<PooledBuffer>(std::move(item.frame->storage)));
  }
  times.written = Clock::now();
  const double latency = std::chrono::duration<double, std::milli>(times.written - times.read).count();
  std::lock_guard lock(stats_mutex_);
  stats_.latency_ms.add(latency);
  stats_.timeline.record(frames_written_, times);
  stats_.add_frame(item.frame->timings);
  if (frames_written_++ == 0) {
    stats_.first_frame_seconds = std::chrono::duration<double>(times.written - process_start_time()).count();
    // The stages' first run: CUDA loads their kernels then (lazy module loading).
    if (times.processed != FrameTimes::Clock::time_point{})
      stats_.startup.push_back(
          {"first frame processed", std::chrono::duration<double>(times.processed - process_start_time()).count()});
  }
  stats_.frames_out = frames_written_;
  media_seconds_ = item.pts * av_q2d(time_base_);
  progress_->update(frames_written_, media_seconds_);
  if (options_.progress_sink) {
    options_.progress_sink->frames = frames_written_;
    options_.progress_sink->media_seconds = media_seconds_;
  }
}

std::unique_ptr<FrameEngine> Transcoder::make_engine(const std::vector<StageSpec>& stages) {
  return backend_ == Backend::cuda
             ? make_cuda_engine(stages, pool_, options_.effective_frames_in_flight(), options_.low_latency)
             : make_cpu_engine(stages, pool_);
}

void Transcoder::build_engine(Size input, PixelFormat format, ColorSpec color) {
  std::vector<StageSpec> stages = options_.stages;
  retire_engine();
  pool_.trim_except(input.width, input.height);
  formats_.input_size = input;
  formats_.input_format = format;
  formats_.input_color = color;
  engine_ = options_.engine_cache ? options_.engine_cache->take(backend_) : nullptr;
  const char* chain = !engine_ ? "built" : engine_->chain().input_size() == input ? "kept" : "kept, configured";
  if (stats_.stage_chain.empty()) stats_.stage_chain = chain;
  if (!engine_) engine_ = make_engine(stages);
  engine_cacheable_ = true;
  traffic_at_start_ = engine_->traffic();
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
    retire_engine();
    engine_ = make_engine(stages);
    engine_cacheable_ = false;
    traffic_at_start_ = {};
    out = engine_->configure(formats_);
  }
  connect_device_output();
  std::lock_guard lock(stats_mutex_);
  stats_.stage_lanes = engine_->chain().lanes();
  stats_.extra_lane_bytes = std::max<uint64_t>(stats_.extra_lane_bytes, engine_->chain().extra_lane_bytes());
  if (stats_.stages.size() != engine_->chain().size()) {
    stats_.stages.resize(engine_->chain().size());
    for (size_t i = 0; i < engine_->chain().size(); ++i) stats_.stages[i].name = engine_->chain().name(i);
  }
  for (StageStats& stage : stats_.stages) stage.ms.reserve(live_stats_frames_);
}

// An encoder that reads device memory (NVENC) gets the chain's output where
// the GPU made it.
void Transcoder::connect_device_output() {
  if (!writer_ || !writer_->takes_device_pictures() || engine_->backend() != Backend::cuda) return;
  engine_->set_device_output([writer = writer_.get()] {
    DevicePicture p = writer->acquire_device_picture();
    return DeviceOutput{p.view, std::move(p.frame)};
  });
}

// Keeps this run's part of the engine's transfer counters in the stats, and
// the engine itself in the cache where it can serve the next run: idle, and
// not left half-way by a failure.
void Transcoder::retire_engine(std::unique_ptr<FrameEngine>* hold) {
  if (!engine_) return;
  const EngineTraffic t = engine_->traffic();
  const EngineTraffic& t0 = traffic_at_start_;
  stats_.traffic.host_to_device_bytes += t.host_to_device_bytes - t0.host_to_device_bytes;
  stats_.traffic.device_to_host_bytes += t.device_to_host_bytes - t0.device_to_host_bytes;
  stats_.traffic.host_copy_bytes += t.host_copy_bytes - t0.host_copy_bytes;
  stats_.traffic.frame_graphs_captured += t.frame_graphs_captured - t0.frame_graphs_captured;
  stats_.traffic.frame_graphs_replayed += t.frame_graphs_replayed - t0.frame_graphs_replayed;
  if (hold) *hold = std::move(engine_);
  else if (options_.engine_cache && engine_cacheable_ && engine_->in_flight() == 0 && !failure_.failed())
    options_.engine_cache->keep(std::move(engine_));
  engine_.reset();
}

// A cache's pool served the runs before this one too: their counts are not this run's.
PoolStats Transcoder::pool_stats_of_this_run() const {
  PoolStats s = pool_.stats();
  s.hits -= pool_at_start_.hits;
  s.misses -= pool_at_start_.misses;
  s.releases -= pool_at_start_.releases;
  s.freed -= pool_at_start_.freed;
  return s;
}

void Transcoder::record_stage_counters(int lane) {
  const StageChain& chain = engine_->chain();
  std::lock_guard lock(stats_mutex_);
  for (size_t i = 0; i < chain.size() && i < stats_.stages.size(); ++i)
    for (const auto& [name, value] : chain.counters(i, lane)) stats_.stages[i].counters[name].add(value);
}

void Transcoder::forward(WriteItem item) {
  if (one_thread_) {
    write_item(item);
    return;
  }
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
    const Clock::time_point processed_at = Clock::now();
    record_stage_counters(done.lane);
    const int64_t tag = std::get<int64_t>(pending_.front());
    pending_.pop_front();
    const FrameMeta m = meta_.at(tag);
    meta_.erase(tag);
    if (m.discard) continue;  // its picture goes back to the pool here
    WriteItem w;
    w.frame = std::move(done);
    w.pts = m.pts;
    w.duration = m.duration;
    w.times = m.times;
    w.times.processed = processed_at;
    forward(std::move(w));
  }
}

void Transcoder::submit(ReadItem& read) {
  MediaItem& item = read.media;
  const PlanarView v = item.frame.view();
  if (!engine_) {
    throw Error(ExitCode::internal, "engine missing");
  }
  end_bridge_when_due();
  if (Size{v.width, v.height} != formats_.input_size || v.format != formats_.input_format) {
    flush_ready(true);
    // The frame's number in the chain's own count: stats_.frames_in belongs
    // to the reader thread, which is ahead by the queue (ThreadSanitizer).
    log_info("input changed to {}x{} {} at frame {}: reconfiguring the stages", v.width, v.height,
             to_string(v.format), next_tag_);
    const auto out_format = formats_.output_format;
    const auto out_color = formats_.output_color;
    formats_.output_format = out_format;
    formats_.output_color = out_color;
    build_engine({v.width, v.height}, v.format, item.frame.color);
  }
  while (!engine_->can_submit()) flush_ready(false);
  const int64_t tag = next_tag_++;
  FrameMeta& meta = meta_[tag];
  meta = FrameMeta{item.frame.pts, item.frame.duration, {}, item.frame.lead_in};
  meta.times.arrived = item.frame.input_ready_at;
  meta.times.read = read.read_at;
  meta.times.taken = read.taken_at;
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

// Only the last lead_in_frames warm-up pictures are worth processing; the
// older ones are released as newer ones come. NVDEC pictures are not held:
// its surfaces are a fixed pool of at most 32, so they go through the chain
// at once (a GOP more of stage work, a fraction of a millisecond a frame).
void Transcoder::hold_lead_in(ReadItem item, MediaReader& reader) {
  if (item.media.frame.view().on_device) {
    submit_video(item, reader);
    return;
  }
  lead_in_.push_back(std::move(item));
  if (int(lead_in_.size()) > options_.lead_in_frames) lead_in_.pop_front();
}

void Transcoder::submit_lead_in(MediaReader& reader) {
  while (!lead_in_.empty()) {
    ReadItem held = std::move(lead_in_.front());
    lead_in_.pop_front();
    submit_video(held, reader);
  }
}

void Transcoder::submit_video(ReadItem& item, MediaReader& reader) {
  if (!writer_) {
    start_video(item.media.frame, reader);
    // Packets read before the first frame could not be written before the header.
    flush_ready(false);
  }
  if (item.media.frame.lead_in) {
    std::lock_guard lock(stats_mutex_);
    ++stats_.frames_lead_in;
  }
  submit(item);
}

void Transcoder::process_loop(MediaReader& reader) {
  while (auto item = read_queue_.pop()) {
    if (failure_.failed()) continue;
    item->taken_at = Clock::now();
    process_item(*item, reader);
  }
  if (writer_ && !failure_.failed()) flush_ready(true);
}

void Transcoder::process_item(ReadItem& item, MediaReader& reader) {
  if (item.media.kind == MediaItem::Kind::video && item.media.frame.lead_in) {
    hold_lead_in(std::move(item), reader);
    return;
  }
  if (item.media.kind == MediaItem::Kind::video) {
    submit_lead_in(reader);
    submit_video(item, reader);
  } else if (item.media.kind == MediaItem::Kind::packet) {
    pending_.push_back(std::move(item.media));
    if (writer_) flush_ready(false);
  }
  if (writer_) flush_ready(false);
}

// Once every picture has left the stages the GPU's part is over. Its
// teardown runs while the writer drains its queue, the encoder flushes and the
// trailer is written: first the decoder (NVDEC's session and surfaces,
// 0.1-0.25 s), then, once the writes are done, the pool and the context
// (~0.07 s). Not the context while an encoder works on the device or still
// holds a pooled picture, nor after NVDEC: pictures it decoded may outlive the
// run (a failed run leaves some in the read queue), and the context must
// outlive them.
std::thread Transcoder::start_device_teardown(MediaReader& reader, std::shared_future<void> writes_done) {
  if (backend_ != Backend::cuda) {
    reader.close_decoder();  // a software decoder goes at once, or to the worker's next input
    return {};
  }
  // A kept engine holds the pool's buffers and the context for the next run.
  const bool release_context = !options_.engine_cache && !reader.hardware_decoder_attached() &&
                               !(writer_ && writer_->takes_device_pictures());
  return std::thread([this, &reader, writes_done, release_context] {
    name_this_thread("sp-teardown");
    try {
      use_cuda_device(cuda_device_);
      reader.close_decoder();
      log_debug("decoder closed");
      if (!release_context) return;
      writes_done.wait();
      pool_.trim_all();
      if (pool_.stats().buffers_live != 0) return;
      if (device_work_.valid()) device_work_.wait();
      release_cuda_context();
      log_debug("device released");
    } catch (const std::exception& e) {
      log_warning("releasing the device: {}", e.what());
    }
  });
}

int Transcoder::run(MediaReader& reader, Clock::time_point started) {
  progress_ = std::make_unique<ProgressReporter>(options_.progress, reader.video().duration_seconds,
                                                 reader.video().frame_count_estimate);
  // Live input: start the device before taking frames, so that the first
  // ones do not wait in our queue for it (a live source waits in its pipe).
  if (options_.low_latency) {
    try {
      resolve_backend();
      prepare_live_output(reader);
    } catch (...) {
      failure_.set(std::current_exception());
    }
  }
  reserve_live_stats(reader);
  one_thread_ = options_.low_latency && options_.overflow == OverflowPolicy::block;
  std::promise<void> writes_done;
  std::thread device_teardown;
  // The reader and the stages are done: what the GPU holds can start to go.
  auto stages_done = [&] {
    try {
      retire_engine();
      device_teardown = start_device_teardown(reader, writes_done.get_future().share());
    } catch (...) {
      failure_.set(std::current_exception());  // the writer thread still gets joined
    }
  };
  if (one_thread_) {
    live_loop(reader);
    stages_done();
  } else {
    const std::string log_context = thread_log_context();
    std::thread read_thread([&] {
      set_thread_log_context(log_context);
      name_this_thread("sp-read");
      read_loop(reader);
    });
    std::thread write_thread([&] {
      set_thread_log_context(log_context);
      name_this_thread("sp-write");
      write_loop();
    });
    try {
      process_loop(reader);
    } catch (...) {
      failure_.set(std::current_exception());
    }
    read_queue_.close();
    write_queue_.close();
    read_thread.join();
    stages_done();
    write_thread.join();
  }
  stats_.pool = pool_stats_of_this_run();  // before the teardown may trim it
  writes_done.set_value();
  stats_.decoder = {reader.video().codec_name + (reader.decodes_on_device() ? " (nvdec)" : ""),
                    reader.software_decode_reason()};
  stats_.decoder_kept = reader.decoder_was_kept();
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
  if (device_teardown.joinable()) device_teardown.join();
  log_debug("output finalized");
  stats_.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  stats_.frames_dropped = int64_t(read_queue_.dropped());
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
  if (interrupted() || options_.stop_requested()) {
    log_warning("{}: wrote {} frames, the output was finalized", interrupted() ? "interrupted" : "stopped",
                frames_written_);
    stats_.result = "interrupted";
    return int(ExitCode::interrupted);
  }
  if (auto err = reader.data_error()) {
    log_error("{}", *err);
    stats_.result = *err;
    return int(ExitCode::data_error);
  }
  if (next_tag_ == 0) {  // (a live output is opened before any frame)
    log_error("{}: no video frames were decoded", options_.input.url);
    stats_.result = "no video frames";
    return int(ExitCode::data_error);
  }
  return 0;
}

}  // namespace sp::detail
