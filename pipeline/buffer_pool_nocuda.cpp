#include "pipeline/buffer_pool_cuda.h"

#include "pipeline/device.h"
#include "pipeline/errors.h"

namespace sp {

void* allocate_cuda_memory(MemoryKind kind, size_t) {
  throw Error(ExitCode::unavailable, std::string(kind == MemoryKind::device ? "device" : "pinned host") +
                                         " memory: " + kNoCudaInBuild);
}

// Nothing was allocated, so there is nothing to free.
void free_cuda_memory(MemoryKind, void*) noexcept {}

}  // namespace sp
