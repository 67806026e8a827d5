#pragma once
// cuFFT's status codes into the project's errors, as SP_CUDA_CHECK does for
// the runtime (the halftone stage is the one cuFFT user).
#include <cufft.h>

#include <string>

#include "pipeline/errors.h"

#define SP_CUFFT_CHECK(expr)                                                                                  \
  do {                                                                                                        \
    const cufftResult r_ = (expr);                                                                            \
    if (r_ != CUFFT_SUCCESS)                                                                                  \
      throw ::sp::Error(::sp::ExitCode::internal, std::string("cuFFT error ") + std::to_string(int(r_)) + ": " #expr); \
  } while (0)
