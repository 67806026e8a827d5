#pragma once
// The kernel spectra the CUDA backend makes on the device at configure
// (kernel_spectra.cu), from the samples the CPU backend transforms with FFTW
// (kernel_samples.h): milliseconds on the GPU against ~1 s of host FFTs at
// 1080p. Both run on the default stream and return once the result is
// written; their temporaries (up to N x N complex double, 128 MB at 1080p,
// and cuFFT's work area) are freed before they return.
#include <cstddef>
#include <memory>

#include "stages/halftone/attraction.h"
#include "stages/halftone/fastsum.h"

namespace sp::halftone {

// A spectrum in one device's memory, freed there.
class DeviceSpectrum {
 public:
  explicit DeviceSpectrum(size_t count);  // on the current device
  ~DeviceSpectrum();
  DeviceSpectrum(const DeviceSpectrum&) = delete;
  DeviceSpectrum& operator=(const DeviceSpectrum&) = delete;
  float2* data() const { return data_; }

 private:
  float2* data_ = nullptr;
  int device_ = 0;
};

// The spectra below, made once a device and shared by every stage configured
// there with the same plan (a plan's spectra depend on it alone): the three
// channels of `channels: cmy`, a seam's next state and the workers of one GPU
// each made their own, six a worker, with cuFFT plans and temporaries whose
// cudaFree waits for the whole device. The stages hold them; the last one
// frees them.
std::shared_ptr<const DeviceSpectrum> shared_kernel_quadrant(const FastsumPlan& plan);
std::shared_ptr<const DeviceSpectrum> shared_attraction_kernel_columns(const AttractionPlan& plan);

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
