#pragma once
// CUDA's stream and event handles, declared exactly as cuda_runtime.h declares
// them (pointers to opaque driver structs), so that interfaces seen by CPU code
// can name them without the CUDA toolkit's headers. Code that calls CUDA
// includes <cuda_runtime.h> itself; the two declarations agree.
struct CUstream_st;
struct CUevent_st;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;

// 1 where this build has the CUDA backend (CMake's STYLEPIPE_HAS_CUDA).
#ifndef STYLEPIPE_HAS_CUDA
#error "STYLEPIPE_HAS_CUDA must be defined (0 or 1) by the build"
#endif
