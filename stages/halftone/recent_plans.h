#pragma once
// The last few plans made, shared: a plan depends only on its arguments, and
// making one can be the stage's start-up. The CPU backend's kernel spectra
// (at 1080p the fast summation's coefficients, an N x N float64 FFT with
// N = 2828 and 8 M kernel samples, take 0.7 s on one core; the attraction's
// 0.3 s) are made once: workers of one `--jobs` run and the channels of
// `channels: cmy` configure the same plan at the same moment, the first makes
// it, the others wait for it. (The CUDA backend makes its spectra on the
// device in milliseconds and shares them while any stage holds them:
// shared_kernel_quadrant in kernel_spectra_gpu.h, which frees device memory
// with its last holder instead of keeping the last few.)
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <utility>

namespace sp::halftone {

template <class Key, class Plan>
class RecentPlans {
 public:
  explicit RecentPlans(size_t keep) : keep_(keep) {}

  std::shared_ptr<const Plan> get(const Key& key, const std::function<Plan()>& make) {
    std::promise<std::shared_ptr<const Plan>> promise;
    Future future;
    bool mine = false;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [k, f] : entries_)
        if (k == key) future = f;
      if (!future.valid()) {
        future = promise.get_future().share();
        entries_.emplace_back(key, future);
        if (entries_.size() > keep_) entries_.pop_front();
        mine = true;
      }
    }
    if (mine) {
      try {
        promise.set_value(std::make_shared<const Plan>(make()));
      } catch (...) {
        promise.set_exception(std::current_exception());
        forget(key);  // a failed plan is not kept: the next configure tries again
      }
    }
    return future.get();
  }

 private:
  void forget(const Key& key) {
    std::lock_guard lock(mutex_);
    std::erase_if(entries_, [&](const auto& e) { return e.first == key; });
  }

  using Future = std::shared_future<std::shared_ptr<const Plan>>;
  size_t keep_;
  std::mutex mutex_;
  std::deque<std::pair<Key, Future>> entries_;
};

}  // namespace sp::halftone
