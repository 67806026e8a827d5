// The sessions' CUDA side in a build without CUDA: every request says why not.
#include "api/public_errors.h"
#include "api/session_impl.h"
#include "stylepipe/streams.h"

namespace stylepipe::detail {

[[noreturn]] void no_cuda(int index) {
  throw DeviceError(ExitCode::unavailable, "cuda:" + std::to_string(index) + ": " + sp::kNoCudaInBuild);
}

void open_cuda_device(int index) { no_cuda(index); }
void enter_cuda_device(int index) { no_cuda(index); }
void check_device_memory(const void*, int index, const char*) { no_cuda(index); }
void copy_image_async(const Image&, const Image&, void*) { no_cuda(0); }
void convert_to_rgba_async(const sp::PlanarView&, const sp::ColorSpec&, const Image&, void*) { no_cuda(0); }

}  // namespace stylepipe::detail

namespace stylepipe {

void order_streams(void*, void*, int device) { detail::no_cuda(device); }

}  // namespace stylepipe
