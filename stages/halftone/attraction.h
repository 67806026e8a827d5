#pragma once
// The attraction field F_A(x) = lambda * sum_y ink(y) (y - x) / |y - x|^2 at
// the pixel centres, as one FFT convolution per frame on a zero-padded grid
// (linear, not circular); the particles sample it bilinearly.
#include <complex>
#include <memory>
#include <vector>

#include "pipeline/cuda_handles.h"
#include "pipeline/image.h"
#include "pipeline/scratch.h"
#include "stages/halftone/float2.h"
#include "stages/halftone/halftone_math.h"

namespace sp::halftone {

// The sizes only (cheap): the kernel's spectra are made where they are used,
// on the host for AttractionCpu (host_attraction_spectra) and on the device
// for AttractionGpu (kernel_spectra.cu), from the same samples
// (attraction_kernel_sample, kernel_samples.h).
struct AttractionPlan {
  int width = 0, height = 0;
  int pw = 0, ph = 0;  // padded grid (>= 2 w, 2 h)
  size_t half_size() const { return size_t(ph) * (pw / 2 + 1); }
  size_t padded_size() const { return size_t(ph) * pw; }
};

AttractionPlan make_attraction_plan(int width, int height);

// Half spectra (ph x (pw/2+1)) of -G_x and -G_y, divided by pw * ph: two
// float FFTW R2C transforms of the padded grid (0.3 s at 1080p).
struct AttractionSpectra {
  std::vector<std::complex<float>> kx_hat, ky_hat;
};
AttractionSpectra host_attraction_spectra(const AttractionPlan& plan);

// -G_x and -G_y are odd in one axis and even in the other, so their spectra
// are purely imaginary, kx_hat even and ky_hat odd in the row frequency ky.
// Rows ky = 0 .. ph/2 of (Im kx_hat, Im ky_hat), each averaged with its
// mirror row ph - ky so the symmetry holds exactly (FFTW leaves round-off in
// the real parts and the mirror rows): (ph/2 + 1) x (pw/2 + 1) pairs, half
// the bytes of the two complex spectra over half the rows.
std::vector<float2> imaginary_kernel_rows(const AttractionPlan& plan, const AttractionSpectra& spectra);
// imaginary_kernel_rows of host_attraction_spectra, made once for concurrent
// and recent callers (the CPU backend's segment workers and colour channels).
std::shared_ptr<const std::vector<float2>> shared_host_kernel_rows(const AttractionPlan& plan);

// Where multiply_kernel_rows reads and writes. Entry (row, kx) of the
// spectrum is at row * spectrum_row + kx * spectrum_column, of the kernel
// rows at ky * kernel_row + kx * kernel_column, and product k (0: x, 1: y)
// at row * product_row + kx * product_column + k * product_component.
struct SpectrumLayout {
  size_t spectrum_row, spectrum_column, kernel_row, kernel_column, product_row, product_column, product_component;
};
// The CPU's: rows of `columns`; row y of the products = [x product | y product].
SP_HD SpectrumLayout row_major_spectra(int columns) {
  const size_t c = size_t(columns);
  return {c, 1, c, 1, 2 * c, 1, c};
}
// CUDA's: the spectrum and the products by columns of ph (the column FFTs run
// contiguous), the kernel rows by columns of ph/2 + 1, the x products'
// columns before the y products'.
SP_HD SpectrumLayout column_major_spectra(int columns, int ph) {
  const size_t p = size_t(ph);
  return {1, p, 1, p / 2 + 1, 1, p, size_t(columns) * p};
}

// One step of both backends' attraction: the padded ink's half spectrum times
// lambda * i Im(kernel) for both components, at column kx of row ky and of its
// mirror ph - ky, which share a kernel row (x even, y odd in ky).
SP_HD void multiply_kernel_rows(const float2* spectrum, const float2* kernel_rows, const SpectrumLayout& at, int ph,
                                float lambda, int ky, int kx, float2* products) {
  const float2 k = kernel_rows[ky * at.kernel_row + kx * at.kernel_column];
  const float kx_im = lambda * k.x, ky_im = lambda * k.y;
  const auto write_row = [&](int row, float y_sign) {
    const float2 a = spectrum[row * at.spectrum_row + kx * at.spectrum_column];
    float2* out = products + row * at.product_row + kx * at.product_column;
    out[0] = make_float2(-a.y * kx_im, a.x * kx_im);
    out[at.product_component] = make_float2(-a.y * ky_im * y_sign, a.x * ky_im * y_sign);
  };
  write_row(ky, 1.f);
  const int mirror = ph - ky;
  if (ky != 0 && mirror != ky) write_row(mirror, -1.f);
}

// Float64 oracle at one pixel centre (x, y), lambda = 1.
void direct_attraction(const float* ink, int w, int h, int x, int y, double& fx, double& fy);

// The transforms pruned as on CUDA (AttractionGpu), in rows where CUDA runs
// its column passes on transposed copies; both multiply through
// multiply_kernel_rows, so the CPU run checks that arithmetic for the GPU.
class AttractionCpu {
 public:
  explicit AttractionCpu(const AttractionPlan& plan);
  ~AttractionCpu();
  AttractionCpu(const AttractionCpu&) = delete;
  AttractionCpu& operator=(const AttractionCpu&) = delete;
  // fx, fy: width x height.
  void compute(const float* ink, float lambda, float* fx, float* fy);

 private:
  const AttractionPlan& plan_;
  std::shared_ptr<const std::vector<float2>> kernel_rows_;  // imaginary_kernel_rows
  float* ink_rows_ = nullptr;               // h x pw, zero beyond column w
  std::complex<float>* row_spectra_ = nullptr;  // ph x (pw/2+1), rows >= h zero for good
  std::complex<float>* spectrum_ = nullptr;     // ph x (pw/2+1)
  std::complex<float>* products_ = nullptr;     // ph x 2 (pw/2+1): row y = [x product | y product]
  float* field_rows_ = nullptr;                 // 2h x pw: row 2y + k = component k of field row y
  void* row_r2c_ = nullptr;
  void* column_forward_ = nullptr;
  void* column_inverse_ = nullptr;
  void* row_c2r_ = nullptr;
};

// The same on CUDA (cuFFT; attraction.cu, CUDA builds only); lambda is read from
// the device's FrameNumbers. The 2D transforms are pruned to the non-zero
// quarter: row R2C over the h ink rows, column C2C over the pw/2+1 spectral
// columns, one product kernel for both components, column C2C inverse over
// both, row C2R over only the h rows the field needs (attraction.cu).
class DeviceSpectrum;  // kernel_spectra_gpu.h

class AttractionGpu {
 public:
  AttractionGpu() = default;
  ~AttractionGpu();
  AttractionGpu(const AttractionGpu&) = delete;
  AttractionGpu& operator=(const AttractionGpu&) = delete;
  void configure(const AttractionPlan& plan, ScratchAllocator& scratch);
  void compute(const float* ink, const FrameNumbers* numbers, float* fx, float* fy, cudaStream_t stream);

 private:
  void release();
  int width_ = 0, height_ = 0, pw_ = 0, ph_ = 0;
  // Layouts: column_major_spectra, columns = pw/2 + 1.
  // imaginary_kernel_rows by columns, made on the device: columns x (ph/2+1),
  // shared by this device's stages (kernel_spectra_gpu.h).
  std::shared_ptr<const DeviceSpectrum> kernel_columns_;
  float* ink_rows_ = nullptr;         // h x pw: the ink, zero beyond column w
  float2* row_spectra_ = nullptr;     // h x columns from the row R2C; then 2h x columns: row y = [x | y] product rows
  float2* column_input_ = nullptr;    // columns x ph: entries < h of each column transposed in, the rest zero for good
  float2* spectrum_ = nullptr;        // columns x ph: the 2D half spectrum of the padded ink
  float2* products_ = nullptr;        // 2 columns x ph: the x products' columns, then the y products'
  float* field_rows_ = nullptr;       // 2h x pw: row 2y + k = component k of field row y (aliases spectrum_)
  int row_r2c_ = 0, column_forward_ = 0, column_inverse_ = 0, row_c2r_ = 0;  // cufftHandle
  bool plans_ = false;
};

}  // namespace sp::halftone
