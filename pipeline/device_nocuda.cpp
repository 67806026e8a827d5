// A CPU-only build's answers to the device questions: no CUDA here, and why.
#include "pipeline/device.h"

#include "pipeline/errors.h"

namespace sp {

bool cuda_device_available(std::string* why) {
  if (why) *why = kNoCudaInBuild;
  return false;
}

int cuda_device_count() { return 0; }

DeviceProperties current_device_properties() { throw Error(ExitCode::unavailable, kNoCudaInBuild); }

void start_cuda_context() { throw Error(ExitCode::unavailable, kNoCudaInBuild); }

// No context was ever started, so there is none to release or to hold.
void release_cuda_context() {}
CudaContextHold::CudaContextHold() = default;
CudaContextHold::~CudaContextHold() = default;

}  // namespace sp
