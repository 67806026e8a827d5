#include "pipeline/parallel.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "pipeline/cores.h"

namespace sp {

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::run(int chunks, const std::function<void(int)>& chunk_fn) {
  // One job at a time: callers from several pipeline threads queue up here.
  std::lock_guard job_lock(job_mutex_);
  {
    std::lock_guard lock(mutex_);
    job_ = &chunk_fn;
    next_chunk_ = 0;
    chunk_count_ = chunks;
    pending_ = chunks;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  work();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void WorkerPool::work() {
  for (;;) {
    int chunk;
    const std::function<void(int)>* job;
    {
      std::lock_guard lock(mutex_);
      if (!job_ || next_chunk_ >= chunk_count_) return;
      chunk = next_chunk_++;
      job = job_;
    }
    try {
      (*job)(chunk);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    if (--pending_ == 0) done_.notify_all();
  }
}

void WorkerPool::loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    work();
  }
}

namespace {

thread_local WorkerPool* scoped_pool = nullptr;

WorkerPool& pool() {
  if (scoped_pool) return *scoped_pool;
  static WorkerPool shared(usable_cores());
  return shared;
}

}  // namespace

ScopedWorkerPool::ScopedWorkerPool(WorkerPool* pool) : previous_(scoped_pool) {
  if (pool) scoped_pool = pool;
}

ScopedWorkerPool::~ScopedWorkerPool() { scoped_pool = previous_; }

int worker_count() { return pool().size(); }

void parallel_for(int count, const std::function<void(int, int)>& fn, int min_chunk) {
  if (count <= 0) return;
  const int workers = pool().size();
  const int chunks = std::max(1, std::min(count / std::max(1, min_chunk), workers * 4));
  if (chunks <= 1 || workers == 1) {
    fn(0, count);
    return;
  }
  pool().run(chunks, [&](int c) {
    const int begin = int(int64_t(count) * c / chunks);
    const int end = int(int64_t(count) * (c + 1) / chunks);
    if (begin < end) fn(begin, end);
  });
}

}  // namespace sp
