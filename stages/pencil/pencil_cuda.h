#pragma once
// Kernel launchers of the CUDA backend (nvcc translation units only).
#include <cuda_runtime.h>

#include <cstdint>

#include "pipeline/image.h"
#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_math.h"

namespace sp::pencil::gpu {

struct DeviceLineKernels {
  const LineRun* runs = nullptr;
  const uint8_t* weights = nullptr;
  int begin[kDirections + 1] = {};
  int half_length = 0;
};

// Dynamic shared memory of the classify/draw kernels; raises the opt-in limit.
void prepare_stroke_kernels(int half_length);

void launch_median_gradient(const RgbaView& in, GradientForm form, uint16_t* gradient, cudaStream_t stream);
void launch_classify(const uint16_t* gradient, int width, int height, const DeviceLineKernels& k,
                     uint16_t* classified, cudaStream_t stream);
// range[0] = ~min, range[1] = max of Sp (both start at 0, combined with atomicMax).
void launch_draw(const uint16_t* classified, int width, int height, const DeviceLineKernels& k, uint32_t* sp,
                 uint32_t* range, cudaStream_t stream);

void launch_histogram(const RgbaView& in, uint32_t* counts, cudaStream_t stream);
void launch_tone_levels(const uint32_t* counts, double pixels, double ema_factor, bool have_history, double* ema,
                        const double* target_cdf, const float* ln_level, float* ln_j, cudaStream_t stream);

struct CombineArgs {
  const uint32_t* sp = nullptr;
  const uint32_t* range = nullptr;
  // Smoothed range state, two slots: read slot `parity`, block 0 writes the other.
  double* range_state = nullptr;
  int parity = 0;
  int have_history = 0;
  double ema_factor = 0;
  const float* ln_j = nullptr;
  const float* beta = nullptr;  // null: fast closed form
  float fast_beta_scale = 0;
  const uint8_t* texels = nullptr;
  int tex_width = 0, tex_height = 0;
  const float* ln_h_table = nullptr;
  float gamma_s = 1, gamma_i = 1;
  bool color = false;
};
void launch_combine(const RgbaView& in, const RgbaView& out, const CombineArgs& a, cudaStream_t stream);

struct CgArgs {
  RgbaView in;  // for the luma of each pixel
  const float* ln_j = nullptr;  // by luma level
  const uint8_t* texels = nullptr;
  int tex_width = 0, tex_height = 0;
  const float* ln_h_table = nullptr;
  float lambda = 0.2f;
  double tolerance = 1e-4;
  int max_iterations = 100;
  int warm = 0;
  float* x = nullptr;
  float* r = nullptr;
  float* p0 = nullptr;
  float* p1 = nullptr;
  float* q = nullptr;
  double* partials = nullptr;  // 2 buffers * blocks * 3
  SolveStats* stats = nullptr;
};
// Co-resident block count for the cooperative solve on the current device.
int cg_grid_blocks();
void launch_cg(const CgArgs& a, int blocks, cudaStream_t stream);

}  // namespace sp::pencil::gpu
