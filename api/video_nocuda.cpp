// VideoReader's and VideoWriter's CUDA side in a build without CUDA.
#include "api/public_errors.h"
#include "api/video_device.h"
#include "pipeline/device.h"

namespace stylepipe::detail {

struct DeviceFrameConverter::State {};

DeviceFrameConverter::DeviceFrameConverter(sp::BufferPool&) {
  throw DeviceError(ExitCode::unavailable, std::string("video on cuda: ") + sp::kNoCudaInBuild);
}
DeviceFrameConverter::~DeviceFrameConverter() = default;
void DeviceFrameConverter::to_rgba(sp::DecodedFrame, const Image&, void*) {}

void device_rgba_to_host_planes(const Image&, const sp::ColorSpec&, const sp::PlanarView&, sp::BufferPool&, void*) {
  throw DeviceError(ExitCode::unavailable, std::string("video on cuda: ") + sp::kNoCudaInBuild);
}

}  // namespace stylepipe::detail
