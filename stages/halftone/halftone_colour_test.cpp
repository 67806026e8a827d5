// Colour stippling (channels: cmy | rgb): dot counts and charge per channel
// against a float64 channel-ink sum, each output component reproducing its
// input component, points_out per channel, and CUDA against the CPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <fstream>
#include <random>

#include "stages/halftone/halftone_colour.h"
#include "stages/halftone/halftone_test_util.h"
#include "tests/support/test_support.h"

namespace sp::halftone {
namespace {

using test::HostImage;

// Float64 ink of component c: 1 - v/255 for a CMY ink, v/255 for RGB light.
double channel_ink(const HostImage& img, size_t pixel, int c, bool cmy) {
  const double v = img.pixels[4 * pixel + c] / 255.0;
  return cmy ? 1.0 - v : v;
}

Params colour_params(const char* mode, int iterations) {
  Params p = halftone_default_params();
  p.set("channels", std::string(mode));
  p.set("iterations", int64_t(iterations));
  p.set("dots_per_pixel", 0.5);
  return p;
}

TEST(HalftoneColour, CountAndChargePerChannel) {
  std::mt19937_64 rng(test::fresh_seed());
  const HostImage img = test::synthetic_photo(140, 100, rng);
  for (const char* mode : {"cmy", "rgb"}) {
    const bool cmy = mode[0] == 'c';
    ColourHalftoneStage stage(parse_halftone_params(colour_params(mode, 0)));
    test::run_stage_cpu(stage, img);
    const StageCounters counters = stage.counters();
    double total = 0;
    for (int c = 0; c < 3; ++c) {
      double ink = 0;
      for (size_t i = 0; i < size_t(img.width) * img.height; ++i) ink += channel_ink(img, i, c, cmy);
      const FrameNumbers f = stage.channel(c).numbers();
      EXPECT_EQ(f.count, int(std::floor(ink * 0.5 + 0.5))) << mode << " channel " << c;
      EXPECT_NEAR(f.ink_sum, ink, 1e-3 * ink) << mode << " channel " << c;
      EXPECT_NEAR(double(f.lambda) * ink, double(f.count), 1e-4 * f.count);  // neutral
      EXPECT_EQ(stage.channel(c).particles().size(), size_t(f.count));
      total += f.count;
    }
    EXPECT_EQ(counters.at("dots"), total);
    EXPECT_EQ(counters.count(cmy ? "dots_m" : "dots_g"), 1u);
  }
}

// Blurred mean abs error of output component c against input component c (0..1).
double channel_error(const HostImage& a, const HostImage& b, int c, double sigma) {
  std::vector<double> x(size_t(a.width) * a.height), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = a.pixels[4 * i + c] / 255.0;
    y[i] = b.pixels[4 * i + c] / 255.0;
  }
  x = gaussian(x, a.width, a.height, sigma);
  y = gaussian(y, a.width, a.height, sigma);
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += std::abs(x[i] - y[i]);
  return s / x.size();
}

TEST(HalftoneColour, EachComponentReproducesItsChannel) {
  std::mt19937_64 rng(test::fresh_seed() + 1);
  const HostImage img = test::synthetic_photo(150, 110, rng);
  for (const char* mode : {"cmy", "rgb"}) {
    Params p = colour_params(mode, 60);
    p.set("dots_per_pixel", 1.0);
    ColourHalftoneStage stage(parse_halftone_params(p));
    const HostImage out = test::run_stage_cpu(stage, img);
    for (int c = 0; c < 3; ++c) {
      const double err = channel_error(img, out, c, 2.0);
      // A flat field of the channel's mean would be far off on a photo.
      double mean = 0;
      for (size_t i = 0; i < size_t(img.width) * img.height; ++i) mean += img.pixels[4 * i + c] / 255.0;
      mean /= double(img.width) * img.height;
      HostImage flat = img;
      for (size_t i = 0; i < size_t(img.width) * img.height; ++i) flat.pixels[4 * i + c] = uint8_t(mean * 255 + 0.5);
      const double flat_err = channel_error(img, flat, c, 2.0);
      std::printf("%s channel %d: blurred error %.4f (flat field %.4f)\n", mode, c, err, flat_err);
      EXPECT_LT(err, 0.03) << mode << " " << c;
      EXPECT_LT(err, 0.5 * flat_err) << mode << " " << c;
    }
  }
}

TEST(HalftoneColour, PointsOutPerChannel) {
  std::mt19937_64 rng(test::fresh_seed() + 2);
  const HostImage img = test::synthetic_photo(90, 70, rng);
  const std::string base = "/tmp/halftone_colour_" + std::to_string(test::fresh_seed());
  Params p = colour_params("cmy", 3);
  p.set("points_out", base + ".csv");
  ColourHalftoneStage stage(parse_halftone_params(p));
  test::run_stage_cpu(stage, img);
  const char* suffix[3] = {"_c", "_m", "_y"};
  for (int c = 0; c < 3; ++c) {
    const std::string path = base + suffix[c] + ".csv";
    std::ifstream file(path);
    ASSERT_TRUE(file.good()) << path;
    int lines = 0;
    for (std::string line; std::getline(file, line);) ++lines;
    EXPECT_EQ(lines - 1, stage.channel(c).numbers().count) << path;  // a header row, then one per dot
    std::remove(path.c_str());
  }
}

TEST(HalftoneColourCuda, PlacementRenderAndIterationsMatchCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 3);
  const HostImage img = test::synthetic_photo(130, 96, rng);
  for (int iterations : {0, 4}) {
    Params p = colour_params("cmy", iterations);
    p.set("shake", 0.0);
    ColourHalftoneStage cpu(parse_halftone_params(p)), gpu(parse_halftone_params(p));
    const HostImage a = test::run_stage_cpu(cpu, img);
    StageRunner runner(gpu, img.width, img.height, Backend::cuda);
    const HostImage b = runner.process(img, 0);
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(gpu.channel(c).numbers().count, cpu.channel(c).numbers().count) << c;
      const auto pc = cpu.channel(c).particles(), pg = gpu.channel(c).particles();
      ASSERT_EQ(pc.size(), pg.size());
      EXPECT_LE(unmatched_dots(pc, pg), int(pc.size() / 200)) << "iterations " << iterations << ", channel " << c;
    }
    const test::ImageDiff d = test::compare(a, b);
    std::printf("colour, %d iterations: CUDA vs CPU image mean abs %.4f\n", iterations, d.mean_abs);
    EXPECT_LE(d.mean_abs, iterations == 0 ? 0.05 : 0.5);
  }
}

// The three dot sets run side by side on streams of their own: over frames
// (warm ones included) the merged picture must be, byte for byte, the merge
// of each channel run alone as a mono stage on one stream. Direct repulsion
// and no shake: a mono run repeats to the bit (checked first, as the control).
TEST(HalftoneColourCuda, ChannelsSideBySideEqualEachChannelRunAlone) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(test::fresh_seed() + 5);
  std::vector<HostImage> frames;
  for (int f = 0; f < 4; ++f) frames.push_back(test::synthetic_photo(120, 88, rng));
  for (const char* mode : {"cmy", "rgb"}) {
    Params p = direct_params(3);
    p.set("channels", std::string(mode));
    p.set("dots_per_pixel", 0.5);
    const HalftoneSettings settings = parse_halftone_params(p);
    ColourHalftoneStage colour(settings);
    StageRunner colour_runner(colour, 120, 88, Backend::cuda);
    std::vector<std::unique_ptr<HalftoneStage>> alone, again;
    std::vector<std::unique_ptr<StageRunner>> alone_runners, again_runners;
    for (int c = 0; c < 3; ++c) {
      alone.push_back(std::make_unique<HalftoneStage>(channel_settings(settings, c)));
      alone_runners.push_back(std::make_unique<StageRunner>(*alone.back(), 120, 88, Backend::cuda));
    }
    again.push_back(std::make_unique<HalftoneStage>(channel_settings(settings, 0)));
    again_runners.push_back(std::make_unique<StageRunner>(*again.back(), 120, 88, Backend::cuda));
    for (size_t f = 0; f < frames.size(); ++f) {
      const HostImage merged = colour_runner.process(frames[f], int64_t(f));
      std::array<HostImage, 3> planes{HostImage(1, 1), HostImage(1, 1), HostImage(1, 1)};
      for (int c = 0; c < 3; ++c) planes[c] = alone_runners[c]->process(frames[f], int64_t(f));
      ASSERT_EQ(again_runners[0]->process(frames[f], int64_t(f)).pixels, planes[0].pixels)
          << mode << ", frame " << f << ": a mono run does not repeat to the bit";
      HostImage expected(120, 88);
      for (size_t i = 0; i < expected.pixels.size() / 4; ++i) {
        uint32_t px[3];
        for (int c = 0; c < 3; ++c) std::memcpy(&px[c], &planes[c].pixels[4 * i], 4);
        const uint32_t m = merge_channels(px[0], px[1], px[2]);
        std::memcpy(&expected.pixels[4 * i], &m, 4);
      }
      EXPECT_EQ(merged.pixels, expected.pixels) << mode << ", frame " << f;
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(colour.channel(c).numbers().count, alone[c]->numbers().count) << mode << ", frame " << f << ", " << c;
    }
  }
}

}  // namespace
}  // namespace sp::halftone
