#include "pipeline/background_removal.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <mutex>
#include <vector>

namespace sp {
namespace {

class Removals {
 public:
  ~Removals() { wait(); }
  void add(std::string path) {
    std::lock_guard lock(mutex_);
    std::erase_if(pending_, [](std::future<void>& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
    pending_.push_back(std::async(std::launch::async, [path = std::move(path)] {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }));
  }
  void wait() {
    std::lock_guard lock(mutex_);
    for (std::future<void>& f : pending_) f.wait();
    pending_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<std::future<void>> pending_;
};

Removals& removals() {
  static Removals r;
  return r;
}

}  // namespace

void remove_in_background(std::string path) {
  // Under a name of its own first, so that the path is free at once: a run
  // that makes it again (the same --work-dir, the same output) meets nothing.
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path p(path);
  std::filesystem::path moved = p;
  moved.replace_filename(".removing-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
                         p.filename().string());
  std::error_code ec;
  std::filesystem::rename(p, moved, ec);
  if (ec) {
    std::filesystem::remove_all(p, ec);
    return;
  }
  removals().add(moved.string());
}

void wait_for_background_removals() { removals().wait(); }

}  // namespace sp
