#pragma once
#include <string>

#include "pipeline/cuda_handles.h"

namespace sp {

// Whether this build has the CUDA backend (CMake: STYLEPIPE_CUDA, on where
// nvcc is found). A CPU-only build gives this reason wherever CUDA is asked for.
inline constexpr bool kBuildHasCuda = STYLEPIPE_HAS_CUDA;
inline constexpr const char* kNoCudaInBuild = "this build has no CUDA (it was built without the CUDA toolkit)";
// The backends this build can run, for --version: "cpu, cuda" or "cpu".
inline constexpr const char* kBuildBackends = kBuildHasCuda ? "cpu, cuda" : "cpu";

// True when a CUDA device can run our kernels. On false, `why` says why in a
// few words ("no CUDA driver", "no CUDA device", kNoCudaInBuild, ...). Probed
// once per process.
bool cuda_device_available(std::string* why = nullptr);
// Devices this process sees (after CUDA_VISIBLE_DEVICES); 0 without a driver.
int cuda_device_count();

struct DeviceProperties {
  std::string name;
  double memory_bandwidth_gbs = 0.0;  // theoretical peak from clock and bus width
  int sm_count = 0;
};
DeviceProperties current_device_properties();

// Creates the CUDA context (hundreds of ms on a large GPU). Call it early on a
// side thread so that opening the input and the encoder overlap with it.
void start_cuda_context();
// Tears the context down (tens of ms) when nothing of it is in use any more,
// so that process exit does not pay for it. A no-op when none was started.
void release_cuda_context();

// Transcodes that run side by side in one process (`--jobs` workers as
// threads) share its context: while a hold lives, release_cuda_context()
// leaves the context to the others.
class CudaContextHold {
 public:
  CudaContextHold();
  ~CudaContextHold();
  CudaContextHold(const CudaContextHold&) = delete;
  CudaContextHold& operator=(const CudaContextHold&) = delete;
};

}  // namespace sp
