#pragma once
// A session is stylepipe on one device: the CUDA context (or the CPU), the
// pool of per-resolution buffers and the stages' compiled state. Chains and
// transcodes made on one session share them, so a program opens one session
// per device and keeps it; Session::open returns the live one where there is.
#include <memory>
#include <string>

namespace stylepipe {

enum class Backend { cpu, cuda };

struct Device {
  Backend backend = Backend::cpu;
  int index = 0;  // the CUDA device, as this process numbers them (after CUDA_VISIBLE_DEVICES)

  static Device cpu() { return {Backend::cpu, 0}; }
  static Device cuda(int index = 0) { return {Backend::cuda, index}; }
  // "cpu", "cuda", "cuda:N"; anything else throws stylepipe::Error (usage).
  static Device parse(const std::string& text);
  std::string to_string() const;  // "cpu", "cuda:N"
  bool operator==(const Device&) const = default;
};

// Whether this build has the CUDA backend, and whether a device can run it
// now; `why` says why not in a few words.
bool build_has_cuda();
bool cuda_available(std::string* why = nullptr);
int cuda_device_count();
// The backends of this build: "cpu, cuda" or "cpu".
const char* build_backends();

// The calling thread's CUDA device: the one it chose (cudaSetDevice,
// torch.cuda.set_device, cupy's Device.use), 0 where it chose none or the
// build has no CUDA. A transcode called on this thread runs there (a single
// run, and --jobs without devices). A front end that calls transcode on a
// thread of its own gives that thread the caller's device first. Neither
// starts CUDA where nothing has; use_cuda_device throws DeviceError for a
// device the build or the host does not have.
int current_cuda_device();
void use_cuda_device(int device);

class Session {
 public:
  // The session of `device`, opened on first use. Throws DeviceError when
  // the device cannot be used (a CPU-only build, no such GPU).
  static std::shared_ptr<Session> open(const Device& device);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Device& device() const;
  // Bytes the session's pool holds (in use and idle), and the buffers it had
  // to allocate so far: flat in steady state.
  size_t pooled_bytes() const;
  size_t allocations() const;
  // Gives idle pooled buffers back to the system.
  void trim();

  // The implementation's side (api/session_impl.h); not for callers.
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  explicit Session(const Device& device);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stylepipe
