#include "pipeline/device.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <dlfcn.h>

#include <atomic>
#include <future>
#include <mutex>
#include <set>

#include "pipeline/cuda_check.h"
#include "pipeline/log.h"

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

namespace {
std::atomic<bool> g_probed{false};
bool cuda_probed() { return g_probed; }
}  // namespace

bool cuda_device_available(std::string* why) {
  static std::once_flag once;
  static bool available = false;
  static std::string reason;
  std::call_once(once, [] {
    g_probed = true;
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
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    log_debug("CUDA: {} device{} visible{}", count, count == 1 ? "" : "s",
              visible ? fmt::format(" (CUDA_VISIBLE_DEVICES={})", visible) : std::string());
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
std::mutex g_started_mutex;
std::set<int> g_started_devices;      // whose context start_cuda_context made
std::atomic<bool> g_runtime_used{false};  // the CUDA runtime was touched by this process
std::atomic<int> g_context_holds{0};
std::atomic<bool> g_release_allowed{false};

// `work` on each distinct one of `devices` at once, a thread each made
// current there; rethrows the first failure once all are done.
void on_each_device(const std::vector<int>& devices, void (*work)()) {
  std::vector<std::future<void>> done;
  for (int device : std::set<int>(devices.begin(), devices.end()))
    done.push_back(std::async(std::launch::async, [device, work] {
      use_cuda_device(device);
      work();
    }));
  for (auto& d : done) d.wait();
  for (auto& d : done) d.get();
}
}  // namespace

CudaContextHold::CudaContextHold() { ++g_context_holds; }
CudaContextHold::~CudaContextHold() { --g_context_holds; }

// The device of a context another library (PyTorch, CuPy, the caller's own
// CUDA) made current on this thread, asked of the driver only where it is
// already loaded: nothing here loads or starts it. -1 where there is none.
static int device_of_a_context_made_current_elsewhere() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (!driver) return -1;
  using GetCurrent = int (*)(void**);  // CUresult cuCtxGetCurrent(CUcontext*)
  using GetDevice = int (*)(int*);     // CUresult cuCtxGetDevice(CUdevice*)
  const auto get_current = reinterpret_cast<GetCurrent>(dlsym(driver, "cuCtxGetCurrent"));
  const auto get_device = reinterpret_cast<GetDevice>(dlsym(driver, "cuCtxGetDevice"));
  // Before cuInit both say CUDA_ERROR_NOT_INITIALIZED, and start nothing.
  void* context = nullptr;
  int device = 0;
  const bool found = get_current && get_device && get_current(&context) == 0 && context != nullptr &&
                     get_device(&device) == 0;
  dlclose(driver);
  return found ? device : -1;
}

int current_cuda_device() {
  if (!g_runtime_used) {
    // A caller's torch.cuda.set_device(1) is this thread's device before stylepipe has used CUDA too.
    const int elsewhere = device_of_a_context_made_current_elsewhere();
    return elsewhere >= 0 ? elsewhere : 0;
  }
  int device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

void use_cuda_device(int device) {
  if (device == 0 && !g_runtime_used) return;  // the runtime's default, and nothing to start for it
  g_runtime_used = true;
  SP_CUDA_CHECK(cudaSetDevice(device));
}

void restrict_cuda_visibility(int count) {
  // cuda_device_available() has probed the driver once it has an answer: too late then.
  if (count <= 0 || g_runtime_used || cuda_probed()) return;
  setenv("CUDA_VISIBLE_DEVICES", visible_devices_up_to(count).c_str(), 1);
}

void start_cuda_context() {
  g_runtime_used = true;
  // FFmpeg's CUDA device (NVDEC) joins the primary context only when its
  // flags are blocking sync; the host waits on events, so they suit us too.
  const cudaError_t flags = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  if (flags == cudaErrorSetOnActiveProcess) cudaGetLastError();  // a context exists already: keep it
  else SP_CUDA_CHECK(flags);
  SP_CUDA_CHECK(cudaFree(nullptr));
  // Only a context made here is ours to release (an earlier call of ours made
  // the one found active, or the host program did).
  if (flags == cudaSuccess) {
    std::lock_guard lock(g_started_mutex);
    g_started_devices.insert(current_cuda_device());
  }
}

void allow_cuda_context_release() { g_release_allowed = true; }

void release_cuda_contexts(const std::vector<int>& devices) { on_each_device(devices, release_cuda_context); }

void start_cuda_contexts(const std::vector<int>& devices) { on_each_device(devices, start_cuda_context); }

void release_cuda_context() {
  if (!g_release_allowed || g_context_holds > 0) return;
  const int device = current_cuda_device();
  {
    std::lock_guard lock(g_started_mutex);
    if (g_started_devices.erase(device) == 0) return;
  }
  SP_CUDA_CHECK(cudaDeviceReset());
}

std::string cuda_device_identity(int device) {
  cudaDeviceProp prop{};
  SP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0;
  SP_CUDA_CHECK(cudaDriverGetVersion(&driver));
  const auto* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x} "
                     "CUDA driver {}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                     b[15], driver);
}

std::string cuda_device_pci_bus_id(int device) {
  char id[32] = {};
  SP_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, device));
  return id;
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
