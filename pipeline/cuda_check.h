#pragma once
#include <cuda_runtime.h>

#include <string>

#include "pipeline/errors.h"

namespace sp {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

}  // namespace sp

#define SP_CUDA_CHECK(expr)                                                \
  do {                                                                     \
    cudaError_t sp_err_ = (expr);                                          \
    if (sp_err_ != cudaSuccess) sp::throw_cuda_error(sp_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations immediately.
#define SP_CUDA_CHECK_LAUNCH() SP_CUDA_CHECK(cudaGetLastError())
