#pragma once
// float2, the dot positions and forces both backends share: CUDA's own type in
// CUDA builds (host and device code pass arrays of it to each other); in a
// CPU-only build a struct of the same layout (two floats, 8-byte aligned), so
// the CPU code needs no CUDA header.
#include "pipeline/cuda_handles.h"

#if STYLEPIPE_HAS_CUDA
#include <vector_functions.h>
#include <vector_types.h>
#else
struct alignas(8) float2 {
  float x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
#endif
