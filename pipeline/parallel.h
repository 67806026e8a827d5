#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sp {

// Runs fn(begin, end) over [0, count) split into contiguous chunks on the
// calling thread's pool (ScopedWorkerPool), by default a process-wide pool of
// one thread per usable core (pipeline/cores.h), and waits. The CPU backend of every stage
// uses this for its row loops.
void parallel_for(int count, const std::function<void(int begin, int end)>& fn, int min_chunk = 1);

// Number of threads of the calling thread's pool (at least 1).
int worker_count();

// The calling thread and `threads` - 1 threads of its own. One job at a time:
// callers on several threads queue up, which is why a chain that must run
// beside others on its own threads has a pool of its own.
class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int size() const { return int(threads_.size()) + 1; }
  void run(int chunks, const std::function<void(int)>& chunk_fn);

 private:
  void work();
  void loop();

  std::vector<std::thread> threads_;
  std::mutex job_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int next_chunk_ = 0, chunk_count_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

// While alive, parallel_for and worker_count on this thread use `pool`
// (null: keep the current one).
class ScopedWorkerPool {
 public:
  explicit ScopedWorkerPool(WorkerPool* pool);
  ~ScopedWorkerPool();
  ScopedWorkerPool(const ScopedWorkerPool&) = delete;
  ScopedWorkerPool& operator=(const ScopedWorkerPool&) = delete;

 private:
  WorkerPool* previous_;
};

}  // namespace sp
