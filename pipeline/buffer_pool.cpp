#include "pipeline/buffer_pool.h"

#include <cstdlib>
#include <functional>
#include <new>

#include "pipeline/buffer_pool_cuda.h"

namespace sp {

constexpr int kScratchFormatTag = 1000;

BufferPool::~BufferPool() {
  for (auto& [p, e] : entries_) deallocate(e.key.kind, p);
}

void* BufferPool::allocate(MemoryKind kind, size_t bytes) {
  void* p = nullptr;
  const size_t n = bytes == 0 ? 1 : bytes;
  switch (kind) {
    case MemoryKind::host:
      p = std::aligned_alloc(256, (n + 255) / 256 * 256);
      if (!p) throw std::bad_alloc();
      break;
    case MemoryKind::pinned_host:
    case MemoryKind::device: p = allocate_cuda_memory(kind, n); break;
  }
  return p;
}

void BufferPool::deallocate(MemoryKind kind, void* p) {
  // Errors on free are not recoverable and must not throw from destructors.
  switch (kind) {
    case MemoryKind::host: std::free(p); break;
    case MemoryKind::pinned_host:
    case MemoryKind::device: free_cuda_memory(kind, p); break;
  }
}

void* BufferPool::acquire(const Key& key) {
  std::lock_guard lock(mutex_);
  auto it = idle_.find(key);
  if (it != idle_.end()) {
    void* p = it->second;
    idle_.erase(it);
    entries_[p].in_use = true;
    ++stats_.hits;
    return p;
  }
  void* p = allocate(key.kind, key.bytes);
  entries_[p] = Entry{key, true};
  ++stats_.misses;
  ++stats_.buffers_live;
  stats_.bytes_live += key.bytes;
  stats_.high_water_bytes = std::max(stats_.high_water_bytes, stats_.bytes_live);
  return p;
}

void BufferPool::release(void* data) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(data);
  if (it == entries_.end() || !it->second.in_use) return;
  it->second.in_use = false;
  idle_.emplace(it->second.key, data);
  ++stats_.releases;
}

void BufferPool::free_if(const std::function<bool(const Key&)>& pred) {
  std::lock_guard lock(mutex_);
  for (auto it = idle_.begin(); it != idle_.end();) {
    if (pred(it->first)) {
      deallocate(it->first.kind, it->second);
      stats_.bytes_live -= it->first.bytes;
      --stats_.buffers_live;
      ++stats_.freed;
      entries_.erase(it->second);
      it = idle_.erase(it);
    } else {
      ++it;
    }
  }
}

void BufferPool::trim_except(int width, int height) {
  free_if([&](const Key& k) { return k.width != width || k.height != height; });
}

void BufferPool::trim_all() {
  free_if([](const Key&) { return true; });
}

PoolStats BufferPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void* PooledScratch::allocate(size_t bytes) {
  held_.emplace_back(pool_, BufferPool::Key{kind_, 0, 0, kScratchFormatTag, bytes});
  return held_.back().data();
}

}  // namespace sp
