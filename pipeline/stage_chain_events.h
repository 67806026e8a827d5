#pragma once
// The events that keep frames in order through a stage shared by several
// lanes (CUDA only: stage_chain_cuda.cpp; a CPU-only build has one lane and
// stage_chain_nocuda.cpp refuses to make them).
#include <vector>

#include "pipeline/cuda_handles.h"

namespace sp {

void create_order_events(std::vector<cudaEvent_t>& events);
// Errors on destruction are not recoverable and must not throw from destructors.
void destroy_order_events(const std::vector<cudaEvent_t>& events) noexcept;

}  // namespace sp
