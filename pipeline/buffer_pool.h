#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "pipeline/scratch.h"

namespace sp {

enum class MemoryKind { host, pinned_host, device };

struct PoolStats {
  uint64_t hits = 0;        // acquisitions served by a free buffer
  uint64_t misses = 0;      // acquisitions that had to allocate
  uint64_t releases = 0;
  uint64_t freed = 0;       // buffers returned to the system (trim)
  size_t bytes_live = 0;    // allocated and not yet freed
  size_t high_water_bytes = 0;
  size_t buffers_live = 0;
};

// Buffers keyed by (memory kind, width, height, format tag, bytes). A key
// names a role such as "1920x1080 yuv420p"; a buffer acquired once per frame
// is reused, so steady state never allocates. Thread-safe.
class BufferPool {
 public:
  struct Key {
    MemoryKind kind = MemoryKind::host;
    int width = 0;
    int height = 0;
    int format = 0;  // caller's tag (PixelFormat value, or a scratch tag)
    size_t bytes = 0;
    auto tie() const { return std::tie(kind, width, height, format, bytes); }
    bool operator<(const Key& o) const { return tie() < o.tie(); }
  };

  BufferPool() = default;
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();

  void* acquire(const Key& key);
  void release(void* data);
  // Frees every idle buffer whose size differs from `keep` (or all idle buffers
  // when keep is null): called after a resolution change drops the old size.
  void trim_except(int width, int height);
  void trim_all();
  PoolStats stats() const;

 private:
  struct Entry {
    Key key;
    bool in_use = false;
  };
  static void* allocate(MemoryKind kind, size_t bytes);
  static void deallocate(MemoryKind kind, void* p);
  void free_if(const std::function<bool(const Key&)>& pred);

  mutable std::mutex mutex_;
  std::map<void*, Entry> entries_;
  std::multimap<Key, void*> idle_;
  PoolStats stats_;
};

// A buffer on loan from the pool, given back on destruction.
class PooledBuffer {
 public:
  PooledBuffer() = default;
  PooledBuffer(BufferPool& pool, const BufferPool::Key& key) : pool_(&pool), data_(pool.acquire(key)), bytes_(key.bytes) {}
  PooledBuffer(PooledBuffer&& o) noexcept { *this = std::move(o); }
  PooledBuffer& operator=(PooledBuffer&& o) noexcept {
    reset();
    pool_ = o.pool_;
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    return *this;
  }
  ~PooledBuffer() { reset(); }
  void reset() {
    if (data_) pool_->release(data_);
    data_ = nullptr;
  }
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }
  size_t bytes() const { return bytes_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  BufferPool* pool_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Stage scratch memory taken from the pool, held until release_all()
// (stage reconfiguration or destruction).
class PooledScratch : public ScratchAllocator {
 public:
  PooledScratch(BufferPool& pool, MemoryKind kind) : pool_(pool), kind_(kind) {}
  ~PooledScratch() override { release_all(); }
  void* allocate(size_t bytes) override;
  void release_all() { held_.clear(); }
  size_t bytes() const {
    size_t total = 0;
    for (const PooledBuffer& b : held_) total += b.bytes();
    return total;
  }

 private:
  BufferPool& pool_;
  MemoryKind kind_;
  std::vector<PooledBuffer> held_;
};

}  // namespace sp
