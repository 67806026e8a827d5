#pragma once
#include <string>
#include <vector>

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
// "0000:41:00.0": which physical GPU an ordinal is, whatever CUDA_VISIBLE_DEVICES says.
std::string cuda_device_pci_bus_id(int device);
// "GPU-8c3e0c7a-... CUDA driver 13000": one physical GPU under one driver,
// the key of what is known about its hardware between processes.
std::string cuda_device_identity(int device);

// The calling thread's CUDA device: CUDA's own per-thread current device, 0
// until a thread chooses another (here, or through another library: a
// context PyTorch or CuPy made current on it counts). A run on device N sets
// it on each thread it starts (use_cuda_device(current_cuda_device()) first
// thing), so that its kernels, pools, streams and NVDEC session are all on
// N. Neither call starts the CUDA runtime or the driver in a process that
// has not used them (CPU runs).
int current_cuda_device();
void use_cuda_device(int device);

// CUDA_VISIBLE_DEVICES's entry for this process's ordinal (an index, or a
// GPU's UUID): what a child process must be given to see the same GPU.
std::string visible_device_entry(int ordinal);
// CUDA_VISIBLE_DEVICES for ordinals 0..count-1 of the GPUs visible now, never
// one the environment hides: an ordinal past its list stays past it (and is
// refused as a GPU that does not exist).
std::string visible_devices_up_to(int count);
// The host's NVIDIA GPUs as the kernel driver lists them
// (/proc/driver/nvidia/gpus/*/information), read without starting CUDA:
// the driver's start grows with the GPUs visible, so a run decides which it
// uses before. Empty where they are not shown there (no driver, a container
// without the driver's /proc entries).
struct DriverGpu {
  std::string uuid;   // "GPU-8c3e0c7a-...", as cuda_device_identity begins
  std::string model;  // "NVIDIA H200"
};
std::vector<DriverGpu> driver_gpus(const std::string& proc_dir = "/proc/driver/nvidia/gpus");
// The GPUs this process would see, without starting CUDA: CUDA_VISIBLE_DEVICES's
// entries where it is set, else the driver's (`driver`, as driver_gpus() read
// them); -1 where neither says.
int gpus_visible_without_driver(const std::vector<DriverGpu>& driver);
// Keeps only ordinals 0..count-1 visible, where CUDA has not started in this
// process yet (stylepipe::restrict_cuda_devices).
void restrict_cuda_visibility(int count);

// Creates the calling thread's device's CUDA context (hundreds of ms on a
// large GPU). Call it early on a side thread (after use_cuda_device) so that
// opening the input and the encoder overlap with it.
void start_cuda_context();
// start_cuda_context on each distinct one of `devices` (a --devices list may
// name one twice) at once, a thread each: contexts of several GPUs start in
// parallel. Rethrows the first failure.
void start_cuda_contexts(const std::vector<int>& devices);
// Tears the calling thread's device's context down (tens of ms) when nothing
// of it is in use any more, so that process exit does not pay for it. A no-op
// when none was started there, when this process's start_cuda_context found
// the context made by someone else, or unless allow_cuda_context_release()
// was called: a library's host (PyTorch, CuPy, GStreamer's CUDA elements)
// shares the primary context, which a reset would destroy under it.
void release_cuda_context();
// For a program that owns its process (the CLI), before any run.
void allow_cuda_context_release();
// release_cuda_context on each distinct one of `devices`, a thread each.
void release_cuda_contexts(const std::vector<int>& devices);

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
