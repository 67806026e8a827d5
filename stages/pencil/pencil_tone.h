#pragma once
// Lu's parametric tone model and histogram matching. The matching arithmetic is
// double precision in a fixed order and is shared (SP_HD) by the CPU and the
// one-block CUDA kernel, so both backends produce the same level map.
#include <array>
#include <cmath>
#include <cstdint>

#include "pipeline/hd.h"

namespace sp::pencil {

constexpr int kLevels = 256;

// Tone layers in 0..255 units (Lu et al., sec. 3.2).
constexpr double kSigmaBright = 9.0;
constexpr double kMidLow = 105.0, kMidHigh = 225.0;
constexpr double kMuDark = 90.0, kSigmaDark = 11.0;

double tone_layer_bright(double v);
double tone_layer_mid(double v);
double tone_layer_dark(double v);

struct ToneTarget {
  std::array<double, kLevels> pdf{};  // sums to 1
  std::array<double, kLevels> cdf{};  // cdf[255] == 1 exactly
};
// weights: bright, mid, dark (any positive scale).
ToneTarget make_tone_target(const std::array<double, 3>& weights);

// Named presets of Lu's paper: lu2012 52:37:11, dark 42:29:29, light 76:22:2.
bool tone_preset(const char* name, std::array<double, 3>* weights);

// Source probabilities from counts, optionally blended into an EMA state:
// state = a * state + (1 - a) * p (first frame: state = p).
SP_HD void update_source_histogram(const uint32_t* counts, double pixels, double ema_factor,
                                   bool have_history, double* state, int level) {
  const double p = double(counts[level]) / pixels;
#if defined(__CUDA_ARCH__)
  state[level] = have_history ? ::fma(ema_factor, state[level], (1.0 - ema_factor) * p) : p;
#else
  state[level] = have_history ? std::fma(ema_factor, state[level], (1.0 - ema_factor) * p) : p;
#endif
}

// Sequential prefix sum (fixed order: identical on both backends).
SP_HD void cumulate(const double* pdf, double* cdf) {
  double sum = 0;
  for (int i = 0; i < kLevels; ++i) {
    sum += pdf[i];
    cdf[i] = sum;
  }
}

// Histogram specification: the smallest target level whose CDF reaches the
// source CDF at `level`. Monotone in `level`; the target CDF crosses the
// source CDF value between the result - 1 and the result (one bin).
SP_HD int match_level(const double* source_cdf, const double* target_cdf, int level) {
  const double c = source_cdf[level];
  int lo = 0, hi = kLevels - 1;  // target_cdf[255] == 1 >= any c (up to rounding): answer <= 255
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (target_cdf[mid] >= c) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

}  // namespace sp::pencil
