#pragma once
// The CPU backend's building blocks (multithreaded with sp::parallel_for),
// exposed for the tests.
#include <cstdint>
#include <vector>

#include "pipeline/image.h"
#include "stages/pencil/pencil.h"

namespace sp::pencil::cpu {

// Row-chunk work areas, sized in configure so processing never allocates.
struct RowScratch {
  int chunks = 0;
  int width = 0;
  std::vector<uint32_t> acc, best;   // chunks * width
  std::vector<uint8_t> direction;    // chunks * width
  std::vector<uint32_t> counts;      // chunks * 256
  std::vector<uint32_t> range;       // chunks * 2 (min, max)
  void resize(int chunk_count, int row_width);
};

// Luma of every pixel and its 256-bin histogram.
void luma_histogram(const RgbaView& in, uint8_t* luma, uint32_t* counts, RowScratch& scratch);
// 3x3 median (edge pixels replicated), then the forward-difference gradient.
void median_gradient(const uint8_t* luma, int width, int height, GradientForm form, uint8_t* median,
                     uint16_t* gradient);
// 8 line responses, argmax class per pixel (ties: lowest direction), packed with the gradient.
void classify(const uint16_t* gradient, int width, int height, const LineKernelSet& kernels,
              uint16_t* classified, RowScratch& scratch);
// Sp = sum over directions of (line kernel * C_i); range = {min, max} of Sp.
void draw(const uint16_t* classified, int width, int height, const LineKernelSet& kernels, uint32_t* sp,
          uint32_t range[2], RowScratch& scratch);

// Tone: source histogram (EMA) matched to the target; ln J per source luma level.
void tone_levels(const uint32_t* counts, double pixels, double ema_factor, bool have_history, double* ema_state,
                 const ToneTarget& target, const float* ln_level, float* ln_j_by_luma);
// ln(J) of each output tone level, J = max(level, 0.5) / 255.
void ln_level_table(float* ln_level);

struct CombineInputs {
  const uint32_t* sp = nullptr;
  float sp_lo = 0, sp_hi = 0;  // normalization range (smoothed for video)
  const float* ln_j_by_luma = nullptr;  // 256
  const float* beta = nullptr;          // per pixel (lu2012), or null for the fast closed form
  float fast_beta_scale = 0;
  const PencilTexture* texture = nullptr;
  float gamma_s = 1, gamma_i = 1;
  bool color = false;
};
void combine(const RgbaView& in, const RgbaView& out, const CombineInputs& c);

}  // namespace sp::pencil::cpu
