// CPU xbr against FFmpeg's own xbr filter (libavfilter) and its YUV table.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "stages/xbr/xbr.h"
#include "stages/xbr/xbr_rules.h"
#include "stages/xbr/xbr_test_util.h"

namespace sp::test {
namespace {

std::unique_ptr<Stage> make_xbr(int scale, const std::string& mode = "exact", double threshold = -1) {
  const StageDescriptor* d = StageRegistry::instance().find("xbr");
  EXPECT_NE(d, nullptr);
  Params p = default_params(d->params);
  p.set("scale", int64_t(scale));
  p.set("mode", mode);
  if (threshold > 0) {
    p.set("threshold", threshold);
    p.mark_given("threshold");
  }
  if (d->validate) {
    const auto err = d->validate(p);
    EXPECT_FALSE(err.has_value()) << *err;
  }
  return d->create(p);
}

struct Mismatch {
  size_t pixels = 0;
  std::string first;
};

// Compares RGB with FFmpeg's output, and alpha with the nearest input pixel
// (our documented alpha; FFmpeg has none).
Mismatch compare_with_ffmpeg(const HostImage& in, const HostImage& ours, const HostImage& ffmpeg, int n) {
  Mismatch m;
  if (ours.width != ffmpeg.width || ours.height != ffmpeg.height || ours.width != in.width * n) {
    m.pixels = SIZE_MAX;
    m.first = "size mismatch";
    return m;
  }
  for (int y = 0; y < ours.height; ++y) {
    for (int x = 0; x < ours.width; ++x) {
      const uint8_t* a = &ours.pixels[(size_t(y) * ours.width + x) * 4];
      const uint8_t* b = &ffmpeg.pixels[(size_t(y) * ours.width + x) * 4];
      const uint8_t alpha = in.pixels[(size_t(y / n) * in.width + x / n) * 4 + 3];
      if (std::memcmp(a, b, 3) != 0 || a[3] != alpha) {
        if (m.pixels++ == 0) {
          std::ostringstream msg;
          msg << "(" << x << "," << y << ") ours " << int(a[0]) << "," << int(a[1]) << "," << int(a[2]) << ","
              << int(a[3]) << " ffmpeg " << int(b[0]) << "," << int(b[1]) << "," << int(b[2]) << " input alpha "
              << int(alpha);
          m.first = msg.str();
        }
      }
    }
  }
  return m;
}

// All frames of one size go through one FFmpeg graph per scale.
void expect_matches_ffmpeg(const std::vector<HostImage>& frames, const std::string& what) {
  for (int n = 2; n <= 4; ++n) {
    const std::vector<HostImage> refs = ffmpeg_xbr(frames, n);
    ASSERT_EQ(refs.size(), frames.size());
    auto stage = make_xbr(n);
    for (size_t i = 0; i < frames.size(); ++i) {
      const HostImage& in = frames[i];
      SCOPED_TRACE(what + " #" + std::to_string(i) + " " + std::to_string(in.width) + "x" +
                   std::to_string(in.height) + " xbr=" + std::to_string(n) + " seed " + std::to_string(fresh_seed()));
      const Mismatch m = compare_with_ffmpeg(in, run_stage_cpu(*stage, in), refs[i], n);
      EXPECT_EQ(m.pixels, 0u) << "first: " << m.first;
    }
  }
}

// Every pixel drawn from a few colours: many exact equalities, so the
// equality guards and the level-2 rules all get exercised.
HostImage few_colour_noise(int w, int h, int colours, std::mt19937_64& rng) {
  std::vector<uint32_t> palette(colours);
  for (auto& c : palette) c = uint32_t(rng()) | 0xFF000000u;
  HostImage img(w, h);
  for (int i = 0; i < w * h; ++i) std::memcpy(&img.pixels[size_t(i) * 4], &palette[rng() % colours], 4);
  return img;
}

// Saturated primaries and near-primaries: the colours whose FFmpeg YUV key
// wraps around.
HostImage saturated_image(int w, int h, std::mt19937_64& rng) {
  HostImage img(w, h);
  for (int i = 0; i < w * h; ++i) {
    uint8_t* p = &img.pixels[size_t(i) * 4];
    for (int c = 0; c < 3; ++c) p[c] = (rng() & 1) ? uint8_t(255 - rng() % 8) : uint8_t(rng() % 8);
    p[3] = 255;
  }
  return img;
}

TEST(XbrYuv, KeyEqualsFfmpegTableForEveryColour) {
  const std::vector<uint32_t> table = ffmpeg_rgbtoyuv_table();
  size_t wrong = 0;
  uint32_t first_wrong = 0;
  for (uint32_t c = 0; c < (1u << 24); ++c) {
    // FFmpeg's colour c is 0xRRGGBB; ours is an RGBA word with R in the low
    // byte. A random alpha byte: the key must ignore it, as FFmpeg's
    // c & 0xffffff ignores the padding byte.
    const uint32_t word = ((c >> 16) & 0xFFu) | (c & 0xFF00u) | ((c & 0xFFu) << 16) | ((c * 2654435761u) & 0xFF000000u);
    if (xbr::yuv_key(word) != (table[c] & 0xFFFFFFu) && wrong++ == 0) first_wrong = c;
  }
  EXPECT_EQ(wrong, 0u) << "first colour 0x" << std::hex << first_wrong;
}

TEST(XbrFfmpeg, RandomImages) {
  std::mt19937_64 rng(fresh_seed());
  // Random alpha too: FFmpeg compares whole 32-bit words, padding byte included.
  expect_matches_ffmpeg({random_image(67, 53, rng), few_colour_noise(67, 53, 2, rng), few_colour_noise(67, 53, 3, rng),
                         saturated_image(67, 53, rng)},
                        "random / two-colour / three-colour / saturated");
}

TEST(XbrFfmpeg, OddSizes) {
  std::mt19937_64 rng(fresh_seed());
  const int sizes[][2] = {{1, 1}, {2, 3}, {3, 2}, {1, 7}, {9, 1}, {4, 4}, {257, 241}};
  for (const auto& s : sizes) {
    expect_matches_ffmpeg({random_image(s[0], s[1], rng), few_colour_noise(s[0], s[1], 3, rng)},
                          "random / three-colour");
  }
}

TEST(XbrFfmpeg, SyntheticPixelArt) {
  std::mt19937_64 rng(fresh_seed());
  expect_matches_ffmpeg({synthetic_pixel_art(160, 144, 6, rng), synthetic_pixel_art(160, 144, 16, rng)}, "pixel art");
}

TEST(XbrFfmpeg, RealPixelArt) {
  const auto files = pixel_art_files();
  if (files.empty()) GTEST_SKIP() << "mirrormagic-data is not installed (scripts/install-deps.sh installs it)";
  // Sheets of one size share an FFmpeg graph.
  std::map<std::pair<int, int>, std::vector<HostImage>> by_size;
  for (const auto& f : files) {
    HostImage img = load_image_rgba(f);
    ASSERT_GT(img.width, 0) << "cannot decode " << f;
    by_size[{img.width, img.height}].push_back(std::move(img));
  }
  for (const auto& [size, images] : by_size) expect_matches_ffmpeg(images, "mirrormagic tile sheet");
}

}  // namespace
}  // namespace sp::test
