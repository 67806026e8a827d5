#pragma once
// The CUDA side of VideoReader and VideoWriter (video_cuda.cpp; video_nocuda.cpp
// refuses with why).
#include <memory>

#include "codecs/media_reader.h"
#include "pipeline/buffer_pool.h"
#include "stylepipe/chain.h"

namespace stylepipe::detail {

// Decoded pictures into device RGBA images, queued on the caller's stream. An
// NVDEC picture is converted where it is; a host one goes up through pinned
// staging. Each picture (or its staging) is held until its conversion ran:
// the oldest is waited for only when more than a few are in flight.
class DeviceFrameConverter {
 public:
  explicit DeviceFrameConverter(sp::BufferPool& pool);
  ~DeviceFrameConverter();
  void to_rgba(sp::DecodedFrame picture, const Image& rgba, void* stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A device RGBA image into host planes for the encoder: converted on the
// device in `stream`'s order, copied down, and waited for.
void device_rgba_to_host_planes(const Image& rgba, const sp::ColorSpec& color, const sp::PlanarView& host,
                                sp::BufferPool& pool, void* stream);

}  // namespace stylepipe::detail
