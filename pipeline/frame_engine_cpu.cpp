#include <chrono>
#include <cstring>
#include <optional>

#include "pipeline/convert.h"
#include "pipeline/errors.h"
#include "pipeline/frame_engine.h"

namespace sp {

constexpr int kRgbaTag = 3000;

PlanarView tight_view(uint8_t* base, PixelFormat format, Size size) {
  const PlaneLayout layout = plane_layout(format, size.width, size.height);
  PlanarView v;
  v.format = format;
  v.width = size.width;
  v.height = size.height;
  uint8_t* p = base;
  for (int i = 0; i < layout.count; ++i) {
    v.plane[i] = p;
    v.pitch[i] = layout.pitch[i];
    p += layout.bytes(i);
  }
  return v;
}

void FrameEngine::set_device_output(DeviceOutputSource) {
  throw Error(ExitCode::internal, "only the CUDA engine writes into device pictures");
}

void copy_picture_host(const PlanarView& src, const PlanarView& dst) {
  const PlaneLayout layout = plane_layout(src.format, src.width, src.height);
  for (int i = 0; i < layout.count; ++i) {
    const size_t row = layout.pitch[i];
    if (src.pitch[i] == row && dst.pitch[i] == row) {
      std::memcpy(dst.plane[i], src.plane[i], row * layout.rows[i]);
      continue;
    }
    for (int y = 0; y < layout.rows[i]; ++y)
      std::memcpy(dst.plane[i] + y * dst.pitch[i], src.plane[i] + y * src.pitch[i], row);
  }
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class CpuFrameEngine final : public FrameEngine {
 public:
  CpuFrameEngine(std::vector<StageSpec> stages, BufferPool& pool)
      : pool_(pool), chain_(std::move(stages), Backend::cpu, pool) {}

  Size configure(const EngineFormats& formats) override {
    formats_ = formats;
    const Size in = formats.input_size;
    const Size out = chain_.input_size() == in ? chain_.output_size() : chain_.configure(in);
    rgba_in_ = PooledBuffer(pool_, {MemoryKind::host, in.width, in.height, kRgbaTag, size_t(in.width) * in.height * 4});
    rgba_out_ = PooledBuffer(pool_, {MemoryKind::host, out.width, out.height, kRgbaTag, size_t(out.width) * out.height * 4});
    return out;
  }
  void begin_new_video() override { chain_.forget_history(); }
  void take_history(const FrameEngine& from) override { chain_.take_history(from.chain()); }
  bool can_submit() const override { return !done_.has_value(); }

  void submit(const PlanarView& picture, const FrameInfo& frame, int64_t tag, bool, std::shared_ptr<void>) override {
    if (picture.on_device) throw Error(ExitCode::internal, "a picture in device memory reached the CPU engine");
    const Size in = formats_.input_size, out = chain_.output_size();
    const RgbaView rgba_in{rgba_in_.data(), in.width, in.height, size_t(in.width) * 4};
    const RgbaView rgba_out = chain_.size() == 0
                                  ? rgba_in
                                  : RgbaView{rgba_out_.data(), out.width, out.height, size_t(out.width) * 4};
    EngineFrame result;
    result.tag = tag;
    auto t0 = Clock::now();
    convert_to_rgba_cpu(picture, formats_.input_color, rgba_in);
    result.timings.convert_in_ms = ms_since(t0);
    chain_.run_cpu(rgba_in, rgba_out, frame, result.timings.stage_ms);
    const PlaneLayout layout = plane_layout(formats_.output_format, out.width, out.height);
    result.storage = PooledBuffer(pool_, {MemoryKind::host, out.width, out.height, int(formats_.output_format),
                                          layout.total_bytes()});
    result.picture = tight_view(result.storage.data(), formats_.output_format, out);
    t0 = Clock::now();
    convert_from_rgba_cpu(rgba_out, formats_.output_color, result.picture);
    result.timings.convert_out_ms = ms_since(t0);
    done_ = std::move(result);
  }
  size_t in_flight() const override { return done_ ? 1 : 0; }
  bool oldest_ready() override { return done_.has_value(); }
  EngineFrame take_oldest() override {
    EngineFrame f = std::move(*done_);
    done_.reset();
    return f;
  }
  const StageChain& chain() const override { return chain_; }
  EngineTraffic traffic() const override { return {}; }
  Backend backend() const override { return Backend::cpu; }

 private:
  BufferPool& pool_;
  StageChain chain_;
  EngineFormats formats_;
  PooledBuffer rgba_in_, rgba_out_;
  std::optional<EngineFrame> done_;
};

}  // namespace

std::unique_ptr<FrameEngine> make_cpu_engine(std::vector<StageSpec> stages, BufferPool& pool) {
  return std::make_unique<CpuFrameEngine>(std::move(stages), pool);
}

}  // namespace sp
