#pragma once
// What the element adds to a live pipeline's latency: the time from a
// buffer's arrival on the sink pad to its push on the src pad (pad probes),
// for the last kSamples frames. Fixed storage, so nothing is allocated per
// frame; the percentiles are worked out when the stats are read.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace spgst {

class LatencySamples {
 public:
  static constexpr size_t kSamples = 16384;
  struct Summary {
    uint64_t frames = 0;  // samples the percentiles are of
    uint64_t p50_us = 0, p99_us = 0, max_us = 0;
  };

  void arrived() {
    std::lock_guard lock(mutex_);
    arrived_ = Clock::now();
    pending_ = true;
  }
  // A buffer dropped by QoS never leaves; the next arrival replaces it.
  // Returns the frame's time in microseconds (-1: none was pending).
  int64_t left() {
    std::lock_guard lock(mutex_);
    if (!pending_) return -1;
    pending_ = false;
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - arrived_).count();
    samples_[next_] = uint32_t(std::min<int64_t>(us, UINT32_MAX));
    next_ = (next_ + 1) % kSamples;
    count_ = std::min(count_ + 1, kSamples);
    return us;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    next_ = count_ = 0;
    pending_ = false;
  }
  Summary summary() const {
    std::vector<uint32_t> sorted;
    {
      std::lock_guard lock(mutex_);
      sorted.assign(samples_.begin(), samples_.begin() + std::ptrdiff_t(count_));
    }
    Summary s;
    if (sorted.empty()) return s;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double q) { return uint64_t(sorted[std::min(sorted.size() - 1, size_t(q * double(sorted.size())))]); };
    s.frames = sorted.size();
    s.p50_us = at(0.5);
    s.p99_us = at(0.99);
    s.max_us = sorted.back();
    return s;
  }

 private:
  using Clock = std::chrono::steady_clock;
  mutable std::mutex mutex_;
  std::array<uint32_t, kSamples> samples_{};
  size_t next_ = 0, count_ = 0;
  Clock::time_point arrived_{};
  bool pending_ = false;
};

}  // namespace spgst
