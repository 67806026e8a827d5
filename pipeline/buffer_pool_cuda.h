#pragma once
// The memory kinds only CUDA has (pinned host, device), for the buffer pool:
// buffer_pool_cuda.cpp, or in a CPU-only build buffer_pool_nocuda.cpp, which
// refuses them (nothing there asks for them: no engine runs on CUDA).
#include <cstddef>

#include "pipeline/buffer_pool.h"

namespace sp {

void* allocate_cuda_memory(MemoryKind kind, size_t bytes);
// Errors on free are not recoverable and must not throw from destructors.
void free_cuda_memory(MemoryKind kind, void* p) noexcept;

}  // namespace sp
