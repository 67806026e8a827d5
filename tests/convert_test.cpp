// CPU colour conversions against swscale (the oracle), a float64 model of
// the documented arithmetic, and the RGBA -> YUV 4:4:4 -> RGBA round trip.
#include "pipeline/convert.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>

#include "pipeline/errors.h"
#include "tests/convert_reference.h"
#include "tests/convert_test_util.h"

namespace sp::test {
namespace {

// Largest difference allowed between our conversion and swscale's, in code
// values of the compared format. Both aim at the exactly rounded value, so
// they differ by at most one where swscale's 15-bit intermediates round the
// other way (measured: max 1, mean <= 0.04). Full-range 10-bit is the one
// systematic difference: we use H.273's 1023 steps, swscale scales the 8-bit
// 255 by 4 (1020 steps), up to 3 codes apart at the top (0.75 of an 8-bit level).
int swscale_tolerance(PixelFormat f, const ColorSpec& color) {
  return f == PixelFormat::p010 && color.range == ColorRange::full ? 4 : 1;
}

struct Size2 {
  int w, h;
};
const Size2 kOracleSizes[] = {{64, 48}, {37, 23}};
const Size2 kTinySizes[] = {{1, 1}, {2, 1}, {1, 3}, {3, 2}, {5, 7}};

HostImage make_content(bool photo, int w, int h, std::mt19937_64& rng) {
  return photo ? synthetic_photo(w, h, rng) : random_image(w, h, rng);
}

void for_each_case(const std::function<void(PixelFormat, const ColorSpec&)>& fn) {
  for (const auto& [f, color] : all_conversion_cases()) fn(f, color);
}

// Worst max and mean difference per format, printed once per test: the
// measured agreement with the oracle.
struct Agreement {
  std::map<std::string, std::pair<int, double>> worst;
  void add(PixelFormat f, const ColorSpec& c, const SampleDiff& d) {
    const std::string key =
        std::string(to_string(f)) + (f == PixelFormat::p010 ? std::string(" ") + to_string(c.range) : "");
    auto& [max, mean] = worst[key];
    max = std::max(max, d.max_abs);
    mean = std::max(mean, d.mean_abs);
  }
  void print(const char* what) const {
    for (const auto& [key, v] : worst)
      std::printf("  %s %-13s max %d, worst mean %.4f\n", what, key.c_str(), v.first, v.second);
  }
};

std::string case_name(PixelFormat f, const ColorSpec& c, int w, int h, const char* content) {
  return std::string(to_string(f)) + " " + to_string(c.matrix) + " " + to_string(c.range) + " " + std::to_string(w) +
         "x" + std::to_string(h) + " " + content;
}

TEST(ConvertCpu, ToRgbaMatchesSwscale) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  Agreement agreement;
  for_each_case([&](PixelFormat f, const ColorSpec& color) {
    for (const Size2 s : kOracleSizes)
      for (bool photo : {false, true}) {
        const Picture src = photo ? sws_picture(synthetic_photo(s.w, s.h, rng), f, color)
                                  : random_nominal_picture(f, s.w, s.h, color.range, rng);
        HostImage ours(s.w, s.h);
        convert_to_rgba_cpu(src.view, color, ours.view());
        const HostImage theirs = sws_to_rgba(src, color);
        const SampleDiff d = compare_rgb(ours, theirs);
        const std::string name = case_name(f, color, s.w, s.h, photo ? "photo" : "random");
        EXPECT_LE(d.max_abs, swscale_tolerance(f, color)) << name << " at " << d.where << " (seed " << seed << ")";
        agreement.add(f, color, d);
        // Alpha: the source's where it has one, else opaque.
        for (int y = 0; y < s.h; ++y)
          for (int x = 0; x < s.w; ++x) {
            const int expect_alpha = f == PixelFormat::rgba ? src.row(0, y)[4 * x + 3] : 255;
            ASSERT_EQ(ours.pixels[(size_t(y) * s.w + x) * 4 + 3], expect_alpha) << name << " x " << x << " y " << y;
          }
      }
  });
  agreement.print("to_rgba vs swscale:  ");
}

TEST(ConvertCpu, FromRgbaMatchesSwscale) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed + 1);
  Agreement agreement;
  for_each_case([&](PixelFormat f, const ColorSpec& color) {
    for (const Size2 s : kOracleSizes)
      for (bool photo : {false, true}) {
        const HostImage img = make_content(photo, s.w, s.h, rng);
        Picture ours(f, s.w, s.h);
        convert_from_rgba_cpu(img.view(), color, ours.view);
        const Picture theirs = sws_from_rgba(img, f, color);
        const SampleDiff d = compare_samples(ours, theirs);
        const std::string name = case_name(f, color, s.w, s.h, photo ? "photo" : "random");
        EXPECT_LE(d.max_abs, swscale_tolerance(f, color)) << name << " at " << d.where << " (seed " << seed << ")";
        agreement.add(f, color, d);
      }
  });
  agreement.print("from_rgba vs swscale:");
}

// The fixed-point kernels against the float64 model of the same definition:
// they may differ only where the exact value lies within the coefficients'
// rounding error (2^-16 relative) of a half level.
TEST(ConvertCpu, MatchesFloatModel) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed + 2);
  size_t compared = 0, off_by_one = 0;
  for_each_case([&](PixelFormat f, const ColorSpec& color) {
    std::vector<Size2> sizes(std::begin(kTinySizes), std::end(kTinySizes));
    sizes.insert(sizes.end(), std::begin(kOracleSizes), std::end(kOracleSizes));
    for (const Size2 s : sizes) {
      const size_t pad = rng() % 3 == 0 ? 0 : 1 + rng() % 13;  // also exercise row pitch
      const Picture src = random_picture(f, s.w, s.h, rng, pad);
      HostImage ours(s.w, s.h);
      convert_to_rgba_cpu(src.view, color, ours.view());
      const HostImage model = ref_to_rgba(src, color);
      const ImageDiff d = compare(ours, model);
      const std::string name = case_name(f, color, s.w, s.h, "to_rgba");
      ASSERT_LE(d.max_abs, 1) << name << " (seed " << seed << ")";
      compared += ours.pixels.size();
      off_by_one += d.differing_bytes;

      const HostImage img = random_image(s.w, s.h, rng);
      Picture out(f, s.w, s.h, pad), expect(f, s.w, s.h);
      convert_from_rgba_cpu(img.view(), color, out.view);
      ref_from_rgba(img, color, expect);
      const SampleDiff e = compare_samples(out, expect);
      ASSERT_LE(e.max_abs, 1) << case_name(f, color, s.w, s.h, "from_rgba") << " at " << e.where << " (seed " << seed
                              << ")";
      compared += e.count;
      off_by_one += size_t(e.mean_abs * e.count + 0.5);
      if (f == PixelFormat::p010) {
        for (int i = 0; i < 2; ++i)
          for (int y = 0; y < out.layout.rows[i]; ++y)
            for (size_t x = 0; x < out.layout.pitch[i]; x += 2)
              ASSERT_EQ(out.row(i, y)[x] & 0x3F, 0) << "p010 low bits must be zero";
      }
      if (f == PixelFormat::bgr0) {
        for (int y = 0; y < s.h; ++y)
          for (int x = 0; x < s.w; ++x) ASSERT_EQ(out.row(0, y)[4 * x + 3], 255);
      }
    }
  });
  std::printf("  %zu of %zu values differ by one from the float64 model\n", off_by_one, compared);
  EXPECT_LT(double(off_by_one), 1e-3 * double(compared)) << "seed " << seed;
}

// RGBA -> YUV 4:4:4 -> RGBA. Bound: half a code of Y and of the chroma
// channel that drives a colour, scaled to RGB levels, plus the final
// rounding: limited range 255/219 * 0.5 + max(2(1-Kr), 2(1-Kb)) * 255/224 * 0.5
// + 0.5 < 2.2, so at most 2 levels; full range less.
TEST(ConvertCpu, RoundTripThroughYuv444IsWithinTwoLevels) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed + 3);
  for (ColorMatrix m : kAllMatrices)
    for (ColorRange r : kAllRanges)
      for (bool photo : {false, true}) {
        const ColorSpec color{m, r};
        const HostImage img = make_content(photo, 97, 61, rng);
        Picture yuv(PixelFormat::yuv444p, img.width, img.height);
        convert_from_rgba_cpu(img.view(), color, yuv.view);
        HostImage back(img.width, img.height);
        convert_to_rgba_cpu(yuv.view, color, back.view());
        const SampleDiff d = compare_rgb(back, img);
        std::printf("  round trip %s %s %s: max %d mean %.4f\n", to_string(m), to_string(r), photo ? "photo" : "random",
                    d.max_abs, d.mean_abs);
        EXPECT_LE(d.max_abs, 2) << d.where << " seed " << seed;
        EXPECT_LT(d.mean_abs, 0.75) << "seed " << seed;
      }
}

// Through 4:2:0 a flat-chroma picture (grey levels) must survive exactly up to
// luma quantization: chroma of grey is exactly zero whatever the averaging.
TEST(ConvertCpu, GreyRoundTripThroughYuv420KeepsRGBEqual) {
  std::mt19937_64 rng(fresh_seed() + 4);
  HostImage img(33, 17);
  for (size_t p = 0; p < img.pixels.size(); p += 4) {
    const uint8_t v = uint8_t(rng());
    img.pixels[p] = img.pixels[p + 1] = img.pixels[p + 2] = v;
    img.pixels[p + 3] = 255;
  }
  for (PixelFormat f : {PixelFormat::yuv420p, PixelFormat::nv12, PixelFormat::p010, PixelFormat::gray})
    for (ColorRange r : kAllRanges) {
      const ColorSpec color{ColorMatrix::bt709, r};
      Picture pic(f, img.width, img.height);
      convert_from_rgba_cpu(img.view(), color, pic.view);
      HostImage back(img.width, img.height);
      convert_to_rgba_cpu(pic.view, color, back.view());
      for (size_t p = 0; p < back.pixels.size(); p += 4) {
        ASSERT_EQ(back.pixels[p], back.pixels[p + 1]) << to_string(f);
        ASSERT_EQ(back.pixels[p], back.pixels[p + 2]) << to_string(f);
        ASSERT_LE(std::abs(int(back.pixels[p]) - int(img.pixels[p])), r == ColorRange::full ? 0 : 1) << to_string(f);
      }
    }
}

TEST(ConvertCpu, RejectsMismatchedSizes) {
  Picture pic(PixelFormat::yuv420p, 16, 8);
  HostImage img(16, 10);
  EXPECT_THROW(convert_to_rgba_cpu(pic.view, ColorSpec{}, img.view()), Error);
  EXPECT_THROW(convert_from_rgba_cpu(img.view(), ColorSpec{}, pic.view), Error);
}

TEST(ConvertCpu, FloorBytesCountsPlanesAndRgbaOnce) {
  EXPECT_DOUBLE_EQ(convert_floor_bytes(PixelFormat::yuv420p, {1920, 1080}), 1920.0 * 1080 * 1.5 + 1920.0 * 1080 * 4);
  EXPECT_DOUBLE_EQ(convert_floor_bytes(PixelFormat::p010, {3, 3}), 2.0 * 9 + 4.0 * 2 * 2 + 4.0 * 9);
}

}  // namespace
}  // namespace sp::test
