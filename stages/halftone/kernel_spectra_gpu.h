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

// b_j of host_kernel_hat (fastsum.h) transposed as DevicePlan::kernel_hat
// reads it: index (j1 + N/2) * N + j2 + N/2, N x N float2 on the device.
// Returns the device bytes it borrowed meanwhile (samples and cuFFT's work area).
size_t make_kernel_hat_on_device(const FastsumPlan& plan, float2* transposed_hat);

// imaginary_kernel_rows (attraction.h): (ph/2+1) x (pw/2+1) float2 on the
// device. Returns the device bytes it borrowed meanwhile.
size_t make_attraction_kernel_rows_on_device(const AttractionPlan& plan, float2* rows);

}  // namespace sp::halftone
