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
std::string cuda_device_pci_bus_id(int) { throw Error(ExitCode::unavailable, kNoCudaInBuild); }
std::string cuda_device_identity(int) { throw Error(ExitCode::unavailable, kNoCudaInBuild); }

int current_cuda_device() { return 0; }
void use_cuda_device(int device) {
  if (device != 0) throw Error(ExitCode::unavailable, kNoCudaInBuild);
}

void restrict_cuda_visibility(int) {}

void start_cuda_context() { throw Error(ExitCode::unavailable, kNoCudaInBuild); }
void start_cuda_contexts(const std::vector<int>& devices) {
  if (!devices.empty()) start_cuda_context();
}

// No context was ever started, so there is none to release or to hold.
void release_cuda_context() {}
void allow_cuda_context_release() {}
void release_cuda_contexts(const std::vector<int>&) {}
CudaContextHold::CudaContextHold() = default;
CudaContextHold::~CudaContextHold() = default;

}  // namespace sp
