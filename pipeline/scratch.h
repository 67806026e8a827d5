#pragma once
#include <cstddef>
#include <cstdint>

namespace sp {

// Backend memory for a stage's scratch buffers. On CUDA it hands out device
// memory, on the CPU host memory. Buffers live until the stage is
// reconfigured or destroyed; allocation goes through the pipeline's pool so
// the stats count it and steady state provably does not allocate.
class ScratchAllocator {
 public:
  virtual ~ScratchAllocator() = default;
  virtual void* allocate(size_t bytes) = 0;  // 256-byte aligned, owned by the allocator

  template <class T>
  T* allocate_array(size_t count) {
    return static_cast<T*>(allocate(count * sizeof(T)));
  }
};

}  // namespace sp
