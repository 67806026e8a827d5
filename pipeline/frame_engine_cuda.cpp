#include <cuda_runtime.h>

#include <deque>
#include <thread>

#include "pipeline/convert.h"
#include "pipeline/cuda_check.h"
#include "pipeline/frame_engine.h"
#include "pipeline/frame_graphs.h"

namespace sp {
namespace {

constexpr int kRgbaTag = 3000;
constexpr int kDevicePlanarTag = 3100;

// Everything one frame in flight owns: its stream, its events, its buffers
// and its lane of the stage chain.
struct Slot {
  int lane = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, uploaded = nullptr, converted_in = nullptr, converted_out = nullptr,
              done = nullptr;
  std::vector<cudaEvent_t> stage_marks;
  PooledBuffer staging_in, device_in, rgba_in, rgba_out, device_out;
  std::shared_ptr<void> device_picture;  // a decoder's surface, held until the frame is done
  EngineFrame pending;
};

float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  SP_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

class CudaFrameEngine final : public FrameEngine {
 public:
  CudaFrameEngine(std::vector<StageSpec> stages, BufferPool& pool, int frames_in_flight, bool poll_for_done)
      : pool_(pool),
        chain_(std::move(stages), Backend::cuda, pool, std::max(1, frames_in_flight)),
        slots_(std::max(1, frames_in_flight)),
        poll_for_done_(poll_for_done) {
    for (Slot& s : slots_) {
      s.lane = int(&s - slots_.data());
      SP_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
      for (cudaEvent_t* e : {&s.start, &s.uploaded, &s.converted_in, &s.converted_out})
        SP_CUDA_CHECK(cudaEventCreate(e));
      // The host waits on `done`: block instead of spinning, the codec threads need the cores.
      SP_CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventBlockingSync));
      s.stage_marks.resize(chain_.size() + 1);
      for (auto& e : s.stage_marks) SP_CUDA_CHECK(cudaEventCreate(&e));
    }
    SP_CUDA_CHECK(cudaEventCreateWithFlags(&decoder_copies_done_, cudaEventDisableTiming));
  }

  ~CudaFrameEngine() override {
    for (Slot& s : slots_) {
      cudaStreamSynchronize(s.stream);
      for (cudaEvent_t e : {s.start, s.uploaded, s.converted_in, s.converted_out, s.done}) cudaEventDestroy(e);
      for (auto e : s.stage_marks) cudaEventDestroy(e);
      cudaStreamDestroy(s.stream);
    }
    cudaEventDestroy(decoder_copies_done_);
  }

  Size configure(const EngineFormats& formats) override {
    formats_ = formats;
    const Size in = formats.input_size;
    const Size out = chain_.input_size() == in ? chain_.output_size() : chain_.configure(in);
    const PlaneLayout in_layout = plane_layout(formats.input_format, in.width, in.height);
    const PlaneLayout out_layout = plane_layout(formats.output_format, out.width, out.height);
    for (Slot& s : slots_) {
      s.staging_in = PooledBuffer(pool_, {MemoryKind::pinned_host, in.width, in.height,
                                          int(formats.input_format), in_layout.total_bytes()});
      s.device_in = PooledBuffer(pool_, {MemoryKind::device, in.width, in.height,
                                         kDevicePlanarTag + int(formats.input_format), in_layout.total_bytes()});
      s.rgba_in = PooledBuffer(pool_, {MemoryKind::device, in.width, in.height, kRgbaTag, size_t(in.width) * in.height * 4});
      s.rgba_out = PooledBuffer(pool_, {MemoryKind::device, out.width, out.height, kRgbaTag, size_t(out.width) * out.height * 4});
      s.device_out = PooledBuffer(pool_, {MemoryKind::device, out.width, out.height,
                                          kDevicePlanarTag + int(formats.output_format), out_layout.total_bytes()});
    }
    output_bytes_ = out_layout.total_bytes();
    graphs_.clear();
    replayable_ = chain_.replayable();
    return out;
  }

  void begin_new_video() override {
    chain_.forget_history();
    device_output_ = nullptr;  // the last clip's encoder
  }

  void take_history(const FrameEngine& from) override { chain_.take_history(from.chain()); }

  bool can_submit() const override { return order_.size() < slots_.size(); }

  void submit(const PlanarView& picture, const FrameInfo& frame, int64_t tag, bool pinned,
              std::shared_ptr<void> keep_alive) override {
    Slot& s = slots_[next_slot_];
    next_slot_ = (next_slot_ + 1) % slots_.size();
    const Size in = formats_.input_size, out = chain_.output_size();

    SP_CUDA_CHECK(cudaEventRecord(s.start, s.stream));
    PlanarView device_in = picture;
    if (picture.on_device) {
      // FFmpeg copies NVDEC's output on the legacy default stream, which our
      // non-blocking streams do not wait for by themselves.
      SP_CUDA_CHECK(cudaEventRecord(decoder_copies_done_, cudaStreamLegacy));
      SP_CUDA_CHECK(cudaStreamWaitEvent(s.stream, decoder_copies_done_, 0));
      s.device_picture = std::move(keep_alive);
    } else {
      upload(s, picture, pinned);
      device_in = tight_view(s.device_in.data(), formats_.input_format, in);
    }
    SP_CUDA_CHECK(cudaEventRecord(s.uploaded, s.stream));

    const RgbaView rgba_in{s.rgba_in.data(), in.width, in.height, size_t(in.width) * 4};
    const RgbaView rgba_out = chain_.size() == 0
                                  ? rgba_in
                                  : RgbaView{s.rgba_out.data(), out.width, out.height, size_t(out.width) * 4};
    s.pending = EngineFrame{};
    s.pending.tag = tag;
    s.pending.lane = s.lane;
    const PlanarView out_picture = output_picture(s);
    // Frames on other lanes run their stages meanwhile; the chain orders its temporal stages.
    const auto device_work = [&] {
      convert_to_rgba_cuda(device_in, formats_.input_color, rgba_in, s.stream);
      SP_CUDA_CHECK_LAUNCH();
      record_event(s.converted_in, s.stream);
      chain_.run_cuda(rgba_in, rgba_out, frame, s.stream, s.stage_marks, s.lane);
      convert_from_rgba_cuda(rgba_out, formats_.output_color, out_picture, s.stream);
      SP_CUDA_CHECK_LAUNCH();
      record_event(s.converted_out, s.stream);
    };
    if (replayable_) {
      // The slot's own buffers and events are fixed until configure; the pictures are not.
      FrameGraphs::Key key{uintptr_t(s.lane)};
      append_key(key, device_in);
      append_key(key, out_picture);
      graphs_.run(key, s.stream, device_work);
    } else {
      device_work();
    }
    if (!device_output_) download(s);
    SP_CUDA_CHECK(cudaEventRecord(s.done, s.stream));
    order_.push_back(&s);
  }

  void set_device_output(DeviceOutputSource source) override { device_output_ = std::move(source); }

  // Where the frame's output goes: the consumer's (NVENC's) input surface,
  // which it reads where it is, or the slot's buffer, downloaded after.
  PlanarView output_picture(Slot& s) {
    const Size out = chain_.output_size();
    if (!device_output_) return tight_view(s.device_out.data(), formats_.output_format, out);
    DeviceOutput target = device_output_();
    const PlanarView& p = target.picture;
    if (!p.on_device || p.format != formats_.output_format || p.width != out.width || p.height != out.height)
      throw Error(ExitCode::internal, "the device output picture does not match the chain's output");
    s.pending.picture = p;
    s.pending.device_owner = std::move(target.owner);
    return p;
  }

  void download(Slot& s) {
    const Size out = chain_.output_size();
    s.pending.storage = PooledBuffer(pool_, {MemoryKind::pinned_host, out.width, out.height,
                                             int(formats_.output_format), output_bytes_});
    s.pending.picture = tight_view(s.pending.storage.data(), formats_.output_format, out);
    SP_CUDA_CHECK(cudaMemcpyAsync(s.pending.storage.data(), s.device_out.data(), output_bytes_,
                                  cudaMemcpyDeviceToHost, s.stream));
    traffic_.device_to_host_bytes += output_bytes_;
  }

  void upload(Slot& s, const PlanarView& picture, bool pinned) {
    const Size in = formats_.input_size;
    PlanarView source = picture;
    if (!pinned) {
      source = tight_view(s.staging_in.data(), formats_.input_format, in);
      copy_picture_host(picture, source);
      traffic_.host_copy_bytes += s.staging_in.bytes();
    }
    const PlanarView device_in = tight_view(s.device_in.data(), formats_.input_format, in);
    const PlaneLayout layout = plane_layout(formats_.input_format, in.width, in.height);
    for (int i = 0; i < layout.count; ++i) {
      SP_CUDA_CHECK(cudaMemcpy2DAsync(device_in.plane[i], device_in.pitch[i], source.plane[i], source.pitch[i],
                                      layout.pitch[i], layout.rows[i], cudaMemcpyHostToDevice, s.stream));
    }
    traffic_.host_to_device_bytes += layout.total_bytes();
  }

  size_t in_flight() const override { return order_.size(); }

  bool oldest_ready() override {
    if (order_.empty()) return false;
    const cudaError_t status = cudaEventQuery(order_.front()->done);
    if (status == cudaErrorNotReady) return false;
    SP_CUDA_CHECK(status);
    return true;
  }

  EngineFrame take_oldest() override {
    Slot& s = *order_.front();
    order_.pop_front();
    if (poll_for_done_) {
      // Live: a sleeping wait wakes up late now and then, which shows in p99.
      cudaError_t status;
      while ((status = cudaEventQuery(s.done)) == cudaErrorNotReady) std::this_thread::yield();
      SP_CUDA_CHECK(status);
    } else {
      SP_CUDA_CHECK(cudaEventSynchronize(s.done));
    }
    s.device_picture.reset();
    FrameTimings& t = s.pending.timings;
    t.upload_ms = elapsed_ms(s.start, s.uploaded);
    t.convert_in_ms = elapsed_ms(s.uploaded, s.converted_in);
    t.stage_ms.resize(chain_.size());
    for (size_t i = 0; i < chain_.size(); ++i) t.stage_ms[i] = elapsed_ms(s.stage_marks[i], s.stage_marks[i + 1]);
    t.convert_out_ms = elapsed_ms(s.stage_marks.back(), s.converted_out);
    t.download_ms = elapsed_ms(s.converted_out, s.done);
    return std::move(s.pending);
  }

  const StageChain& chain() const override { return chain_; }
  EngineTraffic traffic() const override {
    EngineTraffic t = traffic_;
    t.frame_graphs_captured = graphs_.captured();
    t.frame_graphs_replayed = graphs_.replayed();
    return t;
  }
  Backend backend() const override { return Backend::cuda; }

 private:
  BufferPool& pool_;
  StageChain chain_;
  std::vector<Slot> slots_;
  std::deque<Slot*> order_;
  size_t next_slot_ = 0;
  cudaEvent_t decoder_copies_done_ = nullptr;
  bool poll_for_done_ = false;
  EngineFormats formats_;
  size_t output_bytes_ = 0;
  EngineTraffic traffic_;
  DeviceOutputSource device_output_;
  FrameGraphs graphs_;
  bool replayable_ = false;
};

}  // namespace

std::unique_ptr<FrameEngine> make_cuda_engine(std::vector<StageSpec> stages, BufferPool& pool,
                                              int frames_in_flight, bool poll_for_done) {
  return std::make_unique<CudaFrameEngine>(std::move(stages), pool, frames_in_flight, poll_for_done);
}

}  // namespace sp
