#pragma once
// Per-pixel logic lives in headers compiled by both g++ and nvcc, so the CPU
// and CUDA backends run the very same arithmetic and agree bit for bit.
#if defined(__CUDACC__)
#define SP_HD __host__ __device__ __forceinline__
#else
#define SP_HD inline
#endif
