#pragma once
// Kernel launchers of the CUDA backend (nvcc translation units only).
#include <cuda_runtime.h>

#include <cstdint>

#include "pipeline/image.h"
#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_math.h"
#include "stages/pencil/pencil_solve.h"
#include "stages/pencil/pencil_stroke_plan.h"

namespace sp::pencil::gpu {

// A StrokePlan on the device (see pencil_stroke_plan.h).
struct DeviceStrokePlan {
  const uint32_t* words = nullptr;  // 16-byte aligned
  int begin[kDirections + 1] = {};
  int order[kDirections] = {};
  int row_directions = 0;
  int diagonal_begin = kDirections;  // order[diagonal_begin..mma_begin): diagonal running sums, after both passes
  int mma_begin = kDirections;         // order[mma_begin..mma_column_begin): tensor cores on the row-major tile
  int mma_column_begin = kDirections;  // order[mma_column_begin..]: tensor cores on the transposed tile
  int half_length = 0;
  int pitch = 0;  // bytes per tile row
  // Set by prepare_stroke_plan:
  bool shared_plan = false;     // words staged in shared memory
  bool shared_classes = false;  // draw: the class tile staged in shared memory
  int shared_bytes = 0;         // dynamic shared memory per block
};
DeviceStrokePlan device_plan_view(const StrokePlan& plan, const uint32_t* device_words);
// Chooses the shared-memory layout and blocks per SM for the classify or the
// draw kernel, and raises the kernels' opt-in shared memory limit. Call before
// launching.
void prepare_stroke_plan(DeviceStrokePlan& plan, bool draw);
// Whether `plan`'s shared-memory layout on the current device is as good as
// `other`'s (blocks per SM, then plan, then class words staged). The diagonal
// runs' prefix tile outgrows the byte tile + exchange from line length ~67 on;
// at 129 it would push the plan out of shared memory.
bool stroke_layout_at_least(const StrokePlan& plan, const StrokePlan& other, bool draw);
// The stage's plan: the cost model's (tensor cores as `mma` allows), with
// fewer tensor-core lines (first the 45/135 degree ones, then all) or without
// diagonal runs wherever those would cost the kernel its shared-memory layout.
StrokePlan choose_stroke_plan(const LineKernelSet& kernels, bool draw, MmaMode mma);

void launch_median_gradient(const RgbaView& in, GradientForm form, uint16_t* gradient, cudaStream_t stream);
void launch_classify(const uint16_t* gradient, int width, int height, const DeviceStrokePlan& plan,
                     uint16_t* classified, cudaStream_t stream);
// range[0] = ~min, range[1] = max of Sp (both start at 0, combined with atomicMax).
void launch_draw(const uint16_t* classified, int width, int height, const DeviceStrokePlan& plan, uint32_t* sp,
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
  const uint8_t* texel_of_pixel = nullptr;  // the screen-space texture, one texel per frame pixel
  const float* ln_h_table = nullptr;
  float gamma_s = 1, gamma_i = 1;
  bool color = false;
};
void launch_combine(const RgbaView& in, const RgbaView& out, const CombineArgs& a, cudaStream_t stream);

struct CgArgs {
  RgbaView in;  // for the luma of each pixel
  const float* ln_j = nullptr;  // by luma level
  const uint8_t* texel_of_pixel = nullptr;  // the screen-space texture, one texel per frame pixel
  const float* ln_h_table = nullptr;
  float lambda = 0.2f;
  double tolerance = 1e-4;
  int max_iterations = 100;
  int warm = 0;
  ChebyshevCoefficients chebyshev;
  // x, p, u are only read where they are written (own tile); r, s, w are read
  // at the neighbouring tiles' halos, so iteration k reads set k & 1 and
  // writes the other.
  float* x = nullptr;
  float* p = nullptr;
  float* u = nullptr;
  float* r[2] = {nullptr, nullptr};
  float* s[2] = {nullptr, nullptr};
  float* w[2] = {nullptr, nullptr};
  double* partials = nullptr;  // 2 buffers * blocks * kSolveSums
  SolveStats* stats = nullptr;
};
constexpr int kCgFields = 9;  // x, p, u, r[2], s[2], w[2]
// Co-resident block count for the cooperative solve on the current device.
int cg_grid_blocks();
void launch_cg(const CgArgs& a, int blocks, cudaStream_t stream);

}  // namespace sp::pencil::gpu
