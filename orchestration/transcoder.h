#pragma once
// The transcoder behind run_transcode(): reader, processor and writer threads
// joined by bounded queues, the frame engine, and the start-up overlap.
#include <chrono>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include "pipeline/device.h"
#include "pipeline/frame_engine.h"
#include "orchestration/engine_cache.h"
#include "orchestration/transcode.h"

namespace sp::detail {

using Clock = std::chrono::steady_clock;

struct ReadItem {
  MediaItem media;
  Clock::time_point read_at;
  Clock::time_point taken_at;  // by the processor
};

struct WriteItem {
  std::optional<EngineFrame> frame;
  int64_t pts = 0, duration = 0;
  FrameTimes times;  // up to `processed`; the writer adds the rest
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
  FrameTimes times;  // arrived, read, taken
  bool discard = false;  // a warm-up frame: it only moves the temporal stages' state
};

class Transcoder {
 public:
  // `device_work` ends when the device thread is done with the context (it
  // asks for NVENC after giving the backend): the context is not released before.
  Transcoder(const TranscodeOptions& o, RunStats& stats, std::future<Choice> device,
             std::shared_future<void> device_work, const MediaReader& reader)
      : options_(o),
        stats_(stats),
        pool_(o.engine_cache ? o.engine_cache->pool() : own_pool_),
        device_(std::move(device)),
        device_work_(std::move(device_work)),
        read_queue_(startup_read_ahead(o, reader), o.overflow),
        write_queue_(o.effective_queue_depth()) {}

  // `started`: where the run's clock (wall_seconds, fps) starts.
  int run(MediaReader& reader, Clock::time_point started);

 private:
  // The next item of the input, counted; false at its end, or when the run
  // is stopping (Ctrl-C, a stop the caller asked for, a failure).
  bool read_next(MediaReader& reader, MediaItem& item);
  void read_loop(MediaReader& reader);
  void write_loop();
  void write_item(WriteItem& item);
  void process_loop(MediaReader& reader);
  void process_item(ReadItem& item, MediaReader& reader);
  void live_loop(MediaReader& reader);
  void reserve_live_stats(const MediaReader& reader);
  void prepare_live_output(MediaReader& reader);
  static size_t startup_read_ahead(const TranscodeOptions& o, const MediaReader& reader);
  bool device_ready() const;
  bool encoder_known_before_the_gpu();
  void resolve_backend();
  void end_bridge_when_due();
  void start_video(const DecodedFrame& frame, MediaReader& reader);
  void build_engine(Size input, PixelFormat format, ColorSpec color);
  void submit(ReadItem& item);
  void hold_lead_in(ReadItem item, MediaReader& reader);
  void submit_lead_in(MediaReader& reader);
  void submit_video(ReadItem& item, MediaReader& reader);
  void flush_ready(bool wait_all);
  void forward(WriteItem item);
  std::unique_ptr<FrameEngine> make_engine(const std::vector<StageSpec>& stages);
  // Counts the engine's traffic; a cache keeps it for its next run, else it
  // goes, unless `hold` takes it (a chain whose state the next engine takes).
  void retire_engine(std::unique_ptr<FrameEngine>* hold = nullptr);
  void connect_device_output();
  std::thread start_device_teardown(MediaReader& reader, std::shared_future<void> writes_done);
  void record_stage_counters(int lane);
  PoolStats pool_stats_of_this_run() const;

  const TranscodeOptions& options_;
  RunStats& stats_;
  BufferPool own_pool_;
  BufferPool& pool_;  // the engine cache's, where the run has one
  const PoolStats pool_at_start_ = pool_.stats();
  std::future<Choice> device_;  // the backend, once the device has started
  std::shared_future<void> device_work_;
  // The GPU of the thread that made the run; its own threads take it too.
  const int cuda_device_ = current_cuda_device();
  Backend backend_ = Backend::cpu;
  bool gpus_without_nvenc_ = false;  // every GPU of the host, as an earlier run found (codecs/nvenc.h)
  bool bridging_ = false;  // frames go through the CPU while the GPU starts
  double last_bridged_frame_ms_ = 0;
  BoundedQueue<ReadItem> read_queue_;
  BoundedQueue<WriteItem> write_queue_;
  FailureLatch failure_;
  // Live input with backpressure: one thread reads, processes and writes.
  bool one_thread_ = false;
  size_t live_stats_frames_ = 0;  // frames the stats have room for before any allocation
  std::unique_ptr<MediaWriter> writer_;
  std::unique_ptr<FrameEngine> engine_;
  bool engine_cacheable_ = false;     // of options_.stages alone (not fitted to the encoder's size)
  EngineTraffic traffic_at_start_;  // of a kept engine: what earlier runs moved
  EngineFormats formats_;
  Size output_size_;
  std::deque<std::variant<int64_t, MediaItem>> pending_;  // frame tags and packets in output order
  std::map<int64_t, FrameMeta> meta_;
  std::deque<ReadItem> lead_in_;  // the latest warm-up pictures, not yet submitted
  int64_t next_tag_ = 0;
  int64_t frames_written_ = 0;
  double media_seconds_ = 0;
  std::unique_ptr<ProgressReporter> progress_;
  std::mutex stats_mutex_;
  AVRational time_base_{1, 1};
};

}  // namespace sp::detail
