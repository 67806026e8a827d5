// Blue-noise quality on constant grey 0.85 (the seed's Fig. 5): the radially
// averaged power spectrum (RAPS) of the dots peaks near the principal
// frequency and is suppressed below it; the anisotropy, averaged over ten
// realizations, stays near the -10 dB floor of an isotropic pattern.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_test_util.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

constexpr int kSide = 128, kHalf = kSide / 2, kRealizations = 10;

// Periodogram |sum_k exp(-2 pi i f.p_k)|^2 / M on the frequencies (u, v) / kSide, |u|, |v| < kHalf.
std::vector<double> periodogram(const std::vector<float2>& pts) {
  std::vector<double> p(size_t(kSide) * kSide, 0.0);
  std::vector<std::complex<double>> ex(size_t(kSide) * pts.size()), ey(ex.size());
  for (size_t k = 0; k < pts.size(); ++k)
    for (int u = -kHalf; u < kHalf; ++u) {
      ex[size_t(u + kHalf) * pts.size() + k] = std::polar(1.0, -2 * M_PI * u * pts[k].x / kSide);
      ey[size_t(u + kHalf) * pts.size() + k] = std::polar(1.0, -2 * M_PI * u * pts[k].y / kSide);
    }
  for (int v = 0; v < kSide; ++v)
    for (int u = 0; u < kSide; ++u) {
      std::complex<double> s = 0;
      const std::complex<double>*a = &ex[size_t(u) * pts.size()], *b = &ey[size_t(v) * pts.size()];
      for (size_t k = 0; k < pts.size(); ++k) s += a[k] * b[k];
      p[size_t(v) * kSide + u] = std::norm(s) / pts.size();
    }
  return p;
}

struct Spectrum {
  int dots = 0, peak = 0;
  double f_rect = 0, f_hex = 0, low = 0, high = 0, anisotropy = 0;
};

// Ten realizations of grey 0.85; `settle` places the dots of one from the
// stage's parameters (the seed varies).
template <class Settle>
Spectrum grey_spectrum(Settle settle) {
  test::HostImage grey(kSide, kSide);
  for (size_t i = 0; i < grey.pixels.size(); i += 4) {
    grey.pixels[i] = grey.pixels[i + 1] = grey.pixels[i + 2] = uint8_t(std::lround(0.85 * 255));
    grey.pixels[i + 3] = 255;
  }
  std::vector<double> mean(size_t(kSide) * kSide, 0.0);
  Spectrum sp;
  for (int r = 0; r < kRealizations; ++r) {
    Params p = halftone_default_params();
    p.set("dots_per_pixel", 0.5);
    p.set("seed", int64_t(test::fresh_seed() % 100000 + r));
    const auto pts = settle(p, grey);
    sp.dots = int(pts.size());
    const auto per = periodogram(pts);
    for (size_t i = 0; i < mean.size(); ++i) mean[i] += per[i] / kRealizations;
  }
  // Annuli of width 1 (in 1/kSide cycles per pixel): mean and anisotropy.
  std::vector<double> sum(kHalf, 0), sum2(kHalf, 0), n(kHalf, 0);
  for (int v = -kHalf; v < kHalf; ++v)
    for (int u = -kHalf; u < kHalf; ++u) {
      const int ring = int(std::lround(std::hypot(u, v)));
      if (ring == 0 || ring >= kHalf) continue;
      const double x = mean[size_t(v + kHalf) * kSide + u + kHalf];
      sum[ring] += x;
      sum2[ring] += x * x;
      n[ring] += 1;
    }
  const double density = double(sp.dots) / (kSide * kSide);
  sp.f_rect = std::sqrt(density) * kSide;
  sp.f_hex = std::sqrt(2 * density / std::sqrt(3.0)) * kSide;
  sp.peak = 1;
  for (int r = 1; r < kHalf; ++r)
    if (sum[r] / n[r] > sum[sp.peak] / n[sp.peak]) sp.peak = r;
  int low_n = 0, high_n = 0;
  for (int r = 4; r < kHalf; ++r) {
    const double m = sum[r] / n[r], var = sum2[r] / n[r] - m * m;
    if (r < 0.6 * sp.f_rect) sp.low += m, ++low_n;
    if (r > 1.3 * sp.f_hex) sp.high += m, ++high_n, sp.anisotropy += 10 * std::log10(var / (m * m));
  }
  sp.low /= low_n;
  sp.high /= high_n;
  sp.anisotropy /= high_n;
  std::printf("%d dots: RAPS peak at %d (principal %.1f..%.1f), low band %.3f, high band %.3f, anisotropy %.1f dB\n",
              sp.dots, sp.peak, sp.f_rect, sp.f_hex, sp.low, sp.high, sp.anisotropy);
  return sp;
}

void expect_blue_noise(const Spectrum& sp) {
  EXPECT_GE(sp.peak, 0.85 * sp.f_rect);
  EXPECT_LE(sp.peak, 1.2 * sp.f_hex);
  EXPECT_LT(sp.low, 0.25 * sp.high);  // blue: little power below the principal frequency
  EXPECT_LT(sp.anisotropy, -6.0);     // near the -10 dB floor of ten isotropic realizations
}

TEST(HalftoneSpectrum, ConstantGreyIsBlueNoise) {
  expect_blue_noise(grey_spectrum([](Params p, const test::HostImage& grey) {
    p.set("iterations", int64_t(100));
    HalftoneStage stage(parse_halftone_params(p));
    test::run_stage_cpu(stage, grey);
    return stage.particles();
  }));
}

// The same 100 iterations as a cold start of 30 and seven warm frames of 10
// whose far field is spread on every third only: still blue noise.
TEST(HalftoneSpectrum, WarmFramesWithALaggingFarFieldStayBlueNoise) {
  expect_blue_noise(grey_spectrum([](Params p, const test::HostImage& grey) {
    p.set("iterations", int64_t(30));
    p.set("video_iterations", int64_t(10));
    p.set("far_field_every", int64_t(3));
    HalftoneStage stage(parse_halftone_params(p));
    StageRunner runner(stage, grey.width, grey.height, Backend::cpu);
    for (int frame = 0; frame < 8; ++frame) runner.process(grey, frame);
    return stage.particles();
  }));
}

}  // namespace
}  // namespace sp::halftone
