#pragma once
#include <optional>

#include "pipeline/buffer_pool.h"
#include "pipeline/convert.h"
#include "pipeline/device.h"
#include "stylepipe/chain.h"
#include "stylepipe/session.h"

namespace stylepipe {

struct Session::Impl {
  Device device;
  sp::BufferPool pool;
  // While a session lives, an early release elsewhere (the CLI's) leaves the context alone.
  std::optional<sp::CudaContextHold> context_hold;
  // Makes the session's device current on the calling thread (CUDA: cudaSetDevice).
  void enter() const;
};

namespace detail {
// "cuda:N: this process sees M CUDA device(s)"
[[noreturn]] void refuse_unseen_cuda_device(int index, int count);
// The CUDA side (device_cuda.cpp; device_nocuda.cpp refuses with why).
void open_cuda_device(int index);  // checks it exists, creates its context
void enter_cuda_device(int index);
// Throws DeviceError unless `data` is memory that device `index` can address.
void check_device_memory(const void* data, int index, const char* what);
// dst = src (same size), queued on `stream`.
void copy_image_async(const Image& dst, const Image& src, void* stream);
// src (device planes) to RGBA8 dst (same size), queued on `stream`.
void convert_to_rgba_async(const sp::PlanarView& src, const sp::ColorSpec& color, const Image& dst, void* stream);
}  // namespace detail

}  // namespace stylepipe
