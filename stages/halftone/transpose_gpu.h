#pragma once
// A tiled transpose of complex floats on the device, for the pruned FFTs
// (fastsum_far.cu, attraction.cu): their column passes run as contiguous
// batches, which cuFFT moves near bandwidth, where strided columns ran at a
// fraction of it.
#include <cuda_runtime.h>

namespace sp::halftone {

// dst[x * dst_pitch + wrap(y + dst_shift)] = src[y * src_pitch + wrap(x + src_shift)]
// for y < rows, x < cols, wrap on a torus of n (shifts 0 and n past every
// index: a plain transpose).
void launch_transpose(const float2* src, int src_pitch, int src_shift, float2* dst, int dst_pitch, int dst_shift,
                      int rows, int cols, int n, cudaStream_t stream);

}  // namespace sp::halftone
