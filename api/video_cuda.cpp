// VideoReader's and VideoWriter's CUDA side (CUDA builds only).
#include <cuda_runtime.h>

#include <deque>

#include "api/video_device.h"
#include "pipeline/convert.h"
#include "pipeline/cuda_check.h"

namespace stylepipe::detail {

namespace {
constexpr size_t kHeldPictures = 4;  // NVDEC lends 8 surfaces to its consumer (InputOptions::frames_held)
sp::RgbaView view_of(const Image& i) { return {i.data, i.width, i.height, i.pitch}; }
}  // namespace

struct DeviceFrameConverter::State {
  struct Held {
    cudaEvent_t converted = nullptr;
    sp::DecodedFrame picture;
    sp::PooledBuffer staging;
  };
  sp::BufferPool& pool;
  std::deque<Held> held;

  void release_finished() {
    while (!held.empty()) {
      const cudaError_t state = held.size() > kHeldPictures ? cudaEventSynchronize(held.front().converted)
                                                            : cudaEventQuery(held.front().converted);
      if (state == cudaErrorNotReady) return;
      cudaEventDestroy(held.front().converted);
      held.pop_front();
      SP_CUDA_CHECK(state);
    }
  }
};

DeviceFrameConverter::DeviceFrameConverter(sp::BufferPool& pool) : state_(new State{pool, {}}) {}

DeviceFrameConverter::~DeviceFrameConverter() {
  for (State::Held& h : state_->held) {
    cudaEventSynchronize(h.converted);
    cudaEventDestroy(h.converted);
  }
}

void DeviceFrameConverter::to_rgba(sp::DecodedFrame picture, const Image& rgba, void* stream_handle) {
  auto stream = static_cast<cudaStream_t>(stream_handle);
  State::Held h;
  const sp::PlanarView view = picture.view();
  if (view.on_device) {
    sp::convert_to_rgba_cuda(view, picture.color, view_of(rgba), stream);
    SP_CUDA_CHECK_LAUNCH();
    h.picture = std::move(picture);
  } else {
    const size_t pitch = size_t(rgba.width) * 4;
    h.staging = sp::PooledBuffer(state_->pool, {sp::MemoryKind::pinned_host, rgba.width, rgba.height, -2,
                                                pitch * size_t(rgba.height)});
    sp::convert_to_rgba_cpu(view, picture.color, {h.staging.data(), rgba.width, rgba.height, pitch});
    SP_CUDA_CHECK(cudaMemcpy2DAsync(rgba.data, rgba.pitch, h.staging.data(), pitch, pitch, size_t(rgba.height),
                                    cudaMemcpyHostToDevice, stream));
  }
  SP_CUDA_CHECK(cudaEventCreateWithFlags(&h.converted, cudaEventDisableTiming));
  const cudaError_t recorded = cudaEventRecord(h.converted, stream);
  state_->held.push_back(std::move(h));
  SP_CUDA_CHECK(recorded);
  state_->release_finished();
}

void device_rgba_to_host_planes(const Image& rgba, const sp::ColorSpec& color, const sp::PlanarView& host,
                                sp::BufferPool& pool, void* stream_handle) {
  auto stream = static_cast<cudaStream_t>(stream_handle);
  const sp::PlaneLayout layout = sp::plane_layout(host.format, host.width, host.height);
  sp::PooledBuffer planes(pool, {sp::MemoryKind::device, host.width, host.height, int(host.format) + 1000,
                                 layout.total_bytes()});
  sp::PlanarView device = host;
  device.on_device = true;
  uint8_t* at = planes.data();
  for (int i = 0; i < layout.count; ++i) {
    device.plane[i] = at;
    device.pitch[i] = layout.pitch[i];
    at += layout.bytes(i);
  }
  sp::convert_from_rgba_cuda(view_of(rgba), color, device, stream);
  SP_CUDA_CHECK_LAUNCH();
  for (int i = 0; i < layout.count; ++i)
    SP_CUDA_CHECK(cudaMemcpy2DAsync(host.plane[i], host.pitch[i], device.plane[i], device.pitch[i], layout.pitch[i],
                                    size_t(layout.rows[i]), cudaMemcpyDeviceToHost, stream));
  SP_CUDA_CHECK(cudaStreamSynchronize(stream));  // the encoder reads the host planes next
}

}  // namespace stylepipe::detail
