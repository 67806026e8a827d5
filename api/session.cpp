#include <map>
#include <mutex>

#include "api/public_errors.h"
#include "api/session_impl.h"
#include "pipeline/device.h"

namespace stylepipe {

Device Device::parse(const std::string& text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.size() < 9 &&
      text.find_first_not_of("0123456789", 5) == std::string::npos)
    return cuda(std::stoi(text.substr(5)));
  throw Error(ExitCode::usage, "device '" + text + "' is not cpu, cuda or cuda:N");
}

std::string Device::to_string() const {
  return backend == Backend::cpu ? "cpu" : "cuda:" + std::to_string(index);
}

bool build_has_cuda() { return sp::kBuildHasCuda; }
bool cuda_available(std::string* why) { return sp::cuda_device_available(why); }
int cuda_device_count() { return sp::cuda_device_count(); }
const char* build_backends() { return sp::kBuildBackends; }

namespace detail {
void refuse_unseen_cuda_device(int index, int count) {
  throw DeviceError(ExitCode::unavailable,
                    "cuda:" + std::to_string(index) + ": this process sees " + std::to_string(count) + " CUDA device(s)");
}
}  // namespace detail

int current_cuda_device() { return detail::guarded([] { return sp::current_cuda_device(); }); }
void use_cuda_device(int device) {
  if (device < 0 || (device > 0 && device >= sp::cuda_device_count()))
    detail::refuse_unseen_cuda_device(device, sp::cuda_device_count());
  detail::guarded([device] { sp::use_cuda_device(device); });
}

void Session::Impl::enter() const {
  if (device.backend == Backend::cuda) detail::enter_cuda_device(device.index);
}

Session::Session(const Device& device) : impl_(std::make_unique<Impl>()) { impl_->device = device; }

Session::~Session() = default;

std::shared_ptr<Session> Session::open(const Device& device) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::weak_ptr<Session>> open_sessions;
  const std::pair<int, int> key{int(device.backend), device.index};
  std::lock_guard lock(mutex);
  if (std::shared_ptr<Session> live = open_sessions[key].lock()) return live;
  std::shared_ptr<Session> session(new Session(device));
  if (device.backend == Backend::cuda) {
    detail::guarded([&] { detail::open_cuda_device(device.index); });
    session->impl_->context_hold.emplace();
  }
  open_sessions[key] = session;
  return session;
}

const Device& Session::device() const { return impl_->device; }

size_t Session::pooled_bytes() const { return impl_->pool.stats().bytes_live; }

size_t Session::allocations() const { return impl_->pool.stats().misses; }

void Session::trim() {
  impl_->enter();
  impl_->pool.trim_all();
}

}  // namespace stylepipe
