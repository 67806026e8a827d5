// The sessions' CUDA side (CUDA builds only).
#include <cuda_runtime.h>

#include <mutex>
#include <set>

#include "api/public_errors.h"
#include "api/session_impl.h"
#include "stylepipe/streams.h"
#include "pipeline/cuda_check.h"
#include "pipeline/device.h"

namespace stylepipe::detail {

void open_cuda_device(int index) {
  std::string why;
  if (!sp::cuda_device_available(&why)) throw DeviceError(ExitCode::unavailable, "cuda:" + std::to_string(index) + ": " + why);
  const int count = sp::cuda_device_count();
  if (index < 0 || index >= count) refuse_unseen_cuda_device(index, count);
  static std::mutex mutex;
  static std::set<int> started;
  std::lock_guard lock(mutex);
  // Set even for device 0: the caller's thread may be on another GPU (another library chose it).
  SP_CUDA_CHECK(cudaSetDevice(index));
  if (started.insert(index).second) sp::start_cuda_context();
}

void enter_cuda_device(int index) { SP_CUDA_CHECK(cudaSetDevice(index)); }

void check_device_memory(const void* data, int index, const char* what) {
  cudaPointerAttributes attributes{};
  SP_CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
  const std::string where = std::string(what) + " ";
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    throw DeviceError(ExitCode::unavailable, where + "is host memory, but the chain runs on cuda:" + std::to_string(index) +
                                                 " (stylepipe copies nothing implicitly)");
  if (attributes.device != index)
    throw DeviceError(ExitCode::unavailable, where + "is on cuda:" + std::to_string(attributes.device) +
                                                 ", but the chain runs on cuda:" + std::to_string(index));
}

void copy_image_async(const Image& dst, const Image& src, void* stream) {
  SP_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, dst.pitch, src.data, src.pitch, size_t(src.width) * 4, size_t(src.height),
                                  cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
}

void convert_to_rgba_async(const sp::PlanarView& src, const sp::ColorSpec& color, const Image& dst, void* stream) {
  sp::convert_to_rgba_cuda(src, color, {dst.data, dst.width, dst.height, dst.pitch}, static_cast<cudaStream_t>(stream));
}

}  // namespace stylepipe::detail

namespace stylepipe {

void order_streams(void* consumer, void* producer, int device) {
  if (consumer == producer) return;
  detail::guarded([&] {
    SP_CUDA_CHECK(cudaSetDevice(device));
    cudaEvent_t done = nullptr;
    SP_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    const cudaError_t recorded = cudaEventRecord(done, static_cast<cudaStream_t>(producer));
    const cudaError_t waited =
        recorded == cudaSuccess ? cudaStreamWaitEvent(static_cast<cudaStream_t>(consumer), done, 0) : recorded;
    cudaEventDestroy(done);  // released once the wait is satisfied
    SP_CUDA_CHECK(waited);
  });
}

}  // namespace stylepipe
