#include "pipeline/buffer_pool_cuda.h"

#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"

namespace sp {

void* allocate_cuda_memory(MemoryKind kind, size_t bytes) {
  void* p = nullptr;
  if (kind == MemoryKind::pinned_host) SP_CUDA_CHECK(cudaMallocHost(&p, bytes));
  else SP_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void free_cuda_memory(MemoryKind kind, void* p) noexcept {
  if (kind == MemoryKind::pinned_host) cudaFreeHost(p);
  else cudaFree(p);
}

}  // namespace sp
