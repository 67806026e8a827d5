#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace sp {

// What a full queue does with a new item. `block` gives backpressure (files);
// `drop_oldest` keeps a live source flowing when the consumer is slower.
enum class OverflowPolicy { block, drop_oldest };

// A bounded multi-producer/multi-consumer queue joining the reader, processor
// and writer threads. close() wakes everyone: pop() then drains what is left
// and returns nullopt; push() after close() discards.
template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity, OverflowPolicy policy = OverflowPolicy::block)
      : capacity_(capacity == 0 ? 1 : capacity), policy_(policy) {}

  // Returns false when the queue was closed (the item is discarded).
  bool push(T item) {
    std::unique_lock lock(mutex_);
    if (policy_ == OverflowPolicy::block) {
      not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    } else if (!closed_ && items_.size() >= capacity_) {
      items_.pop_front();
      ++dropped_;
    }
    if (closed_) return false;
    items_.push_back(std::move(item));
    high_water_ = std::max(high_water_, items_.size());
    not_empty_.notify_one();
    return true;
  }

  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  // Drops everything queued (used when aborting).
  void clear() {
    std::lock_guard lock(mutex_);
    items_.clear();
    not_full_.notify_all();
  }

  uint64_t dropped() const {
    std::lock_guard lock(mutex_);
    return dropped_;
  }
  size_t high_water() const {
    std::lock_guard lock(mutex_);
    return high_water_;
  }
  size_t capacity() const {
    std::lock_guard lock(mutex_);
    return capacity_;
  }
  // Lowering it makes producers wait until the queue drains below the new bound.
  void set_capacity(size_t capacity) {
    std::lock_guard lock(mutex_);
    capacity_ = capacity == 0 ? 1 : capacity;
    not_full_.notify_all();
  }

 private:
  size_t capacity_;
  const OverflowPolicy policy_;
  mutable std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;
  bool closed_ = false;
  uint64_t dropped_ = 0;
  size_t high_water_ = 0;
};

}  // namespace sp
