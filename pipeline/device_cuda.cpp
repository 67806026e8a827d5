#include "pipeline/device.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "pipeline/cuda_check.h"

namespace sp {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  throw Error(ExitCode::internal, std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                                      cudaGetErrorString(err) + ") in " + expr + " at " + file +
                                      ":" + std::to_string(line));
}

static bool nvidia_driver_installed() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) dlclose(driver);
  return driver != nullptr;
}

bool cuda_device_available(std::string* why) {
  static std::once_flag once;
  static bool available = false;
  static std::string reason;
  std::call_once(once, [] {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver && !nvidia_driver_installed()) {
      // The runtime's words ("driver version is insufficient") would send people after an upgrade.
      reason = "no NVIDIA driver was found (libcuda.so.1 is not installed)";
      cudaGetLastError();
      return;
    }
    if (err != cudaSuccess) {
      reason = std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")";
      cudaGetLastError();
      return;
    }
    if (count == 0) {
      reason = "no CUDA device present";
      return;
    }
    available = true;
  });
  if (why) *why = reason;
  return available;
}

int cuda_device_count() {
  int count = 0;
  if (!cuda_device_available() || cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

namespace {
std::atomic<bool> g_context_started{false};
std::atomic<int> g_context_holds{0};
}  // namespace

CudaContextHold::CudaContextHold() { ++g_context_holds; }
CudaContextHold::~CudaContextHold() { --g_context_holds; }

void start_cuda_context() {
  // FFmpeg's CUDA device (NVDEC) joins the primary context only when its
  // flags are blocking sync; the host waits on events, so they suit us too.
  const cudaError_t flags = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  if (flags == cudaErrorSetOnActiveProcess) cudaGetLastError();  // a context exists already: keep it
  else SP_CUDA_CHECK(flags);
  SP_CUDA_CHECK(cudaFree(nullptr));
  g_context_started = true;
}

void release_cuda_context() {
  if (g_context_holds > 0) return;
  if (g_context_started.exchange(false)) SP_CUDA_CHECK(cudaDeviceReset());
}

DeviceProperties current_device_properties() {
  DeviceProperties p;
  int device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  SP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  p.name = prop.name;
  p.sm_count = prop.multiProcessorCount;
  int mem_clock_khz = 0, bus_width_bits = 0;
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  // DDR: two transfers per clock.
  p.memory_bandwidth_gbs = 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
  return p;
}

}  // namespace sp
