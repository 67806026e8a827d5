#pragma once
// The kernel spectra the CUDA backend makes on the device at configure
// (kernel_spectra.cu), from the samples the CPU backend transforms with FFTW
// (kernel_samples.h): milliseconds on the GPU against ~1 s of host FFTs at
// 1080p. Both run on the default stream and return once the result is
// written; their temporaries (up to N x N complex double, 128 MB at 1080p,
// and cuFFT's work area) are freed before they return.
#include "stages/halftone/attraction.h"
#include "stages/halftone/fastsum.h"

namespace sp::halftone {

// b_j of host_kernel_hat (fastsum.h) as DevicePlan::kernel_quadrant holds
// it: K_R is radial on a square grid, so Im b_j is odd in j1 and even in j2,
// and Re b(j1, j2) = -Im b(j2, j1). One quadrant gives every j: entry
// a * N/2 + c, a, c in [0, N/2), is (Im b, -Re b) at j = (a, c), times the
// plan's deconvolution d_a d_c. (N/2)^2 float2 on the device: a quarter of
// the N x N table the band multiply streamed each far field (64 MB at
// 1080p). Returns the device bytes it borrowed meanwhile.
size_t make_kernel_quadrant_on_device(const FastsumPlan& plan, float2* quadrant);

// imaginary_kernel_rows (attraction.h) by columns: entry (ky, kx) at
// kx * (ph/2+1) + ky, (pw/2+1) x (ph/2+1) float2 on the device, the layout
// the CUDA attraction reads (column_major_spectra). Returns the device bytes
// it borrowed meanwhile.
size_t make_attraction_kernel_columns_on_device(const AttractionPlan& plan, float2* kernel_columns);

}  // namespace sp::halftone
