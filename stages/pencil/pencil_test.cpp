// Unit tests of the pencil stage's parts against independent float64 / brute-force oracles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_cpu.h"
#include "stages/pencil/pencil_math.h"
#include "tests/support/test_support.h"

namespace sp::pencil {
namespace {

using sp::test::fresh_seed;

// Lu's layers written out again from the paper, in 0..255 units.
double closed_form_pdf(double v, const std::array<double, 3>& w) {
  const double bright = std::exp(-(255.0 - v) / 9.0) / 9.0;
  const double mid = (v >= 105 && v <= 225) ? 1.0 / 120.0 : 0.0;
  const double dark = std::exp(-(v - 90) * (v - 90) / (2 * 11.0 * 11.0)) / (std::sqrt(2 * M_PI) * 11.0);
  return w[0] * bright + w[1] * mid + w[2] * dark;
}

TEST(PencilTone, TargetHistogramIsTheClosedFormAndSumsToOne) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(0.01, 100.0);
  std::vector<std::array<double, 3>> cases = {{52, 37, 11}, {42, 29, 29}, {76, 22, 2}, {u(rng), u(rng), u(rng)}};
  for (const auto& w : cases) {
    SCOPED_TRACE(testing::Message() << "seed " << fresh_seed() << " weights " << w[0] << ":" << w[1] << ":" << w[2]);
    const ToneTarget t = make_tone_target(w);
    double z = 0;
    for (int v = 0; v < 256; ++v) z += closed_form_pdf(v, w);
    double sum = 0;
    for (int v = 0; v < 256; ++v) {
      EXPECT_NEAR(t.pdf[v], closed_form_pdf(v, w) / z, 1e-12) << "level " << v;
      sum += t.pdf[v];
      double cdf = 0;
      for (int i = 0; i <= v; ++i) cdf += closed_form_pdf(i, w) / z;
      EXPECT_NEAR(t.cdf[v], cdf, 1e-12);
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_EQ(t.cdf[255], 1.0);
  }
  std::array<double, 3> w;
  ASSERT_TRUE(tone_preset("lu2012", &w));
  EXPECT_EQ(w, (std::array<double, 3>{52, 37, 11}));
  ASSERT_TRUE(tone_preset("dark", &w));
  EXPECT_EQ(w, (std::array<double, 3>{42, 29, 29}));
  ASSERT_TRUE(tone_preset("light", &w));
  EXPECT_EQ(w, (std::array<double, 3>{76, 22, 2}));
}

// Random histograms: smooth, spiky (few huge bins) and sparse.
std::vector<uint32_t> random_counts(std::mt19937_64& rng, int kind) {
  std::vector<uint32_t> c(256, 0);
  if (kind == 0) {
    std::normal_distribution<double> n(60 + double(rng() % 140), 10 + double(rng() % 50));
    for (int i = 0; i < 50000; ++i) ++c[std::clamp(int(std::lround(n(rng))), 0, 255)];
  } else if (kind == 1) {
    for (int i = 0; i < 5; ++i) c[rng() % 256] += uint32_t(1000 + rng() % 30000);
    for (int i = 0; i < 2000; ++i) ++c[rng() % 256];
  } else {
    for (int i = 0; i < 40; ++i) c[rng() % 256] += uint32_t(1 + rng() % 5);
  }
  return c;
}

TEST(PencilTone, MatchingIsMonotoneAndWithinOneBinOfTheTarget) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const ToneTarget target = make_tone_target({52, 37, 11});
  for (int trial = 0; trial < 30; ++trial) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " trial " << trial);
    const std::vector<uint32_t> counts = random_counts(rng, trial % 3);
    double total = 0;
    for (uint32_t c : counts) total += c;
    std::vector<double> state(256, 0.0);
    for (int g = 0; g < 256; ++g) update_source_histogram(counts.data(), total, 0.0, false, state.data(), g);
    double source_cdf[256];
    cumulate(state.data(), source_cdf);
    int previous = 0;
    double count_so_far = 0;
    for (int g = 0; g < 256; ++g) {
      const int t = match_level(source_cdf, target.cdf.data(), g);
      EXPECT_GE(t, previous) << "not monotone at " << g;
      previous = t;
      count_so_far += counts[g];
      if (!counts[g]) continue;
      // The matched CDF at t is the source CDF (exact counts); the target
      // reaches it at t and not before: within one bin.
      const double matched = count_so_far / total;
      EXPECT_GE(target.cdf[t], matched - 1e-12) << "level " << g << " -> " << t;
      if (t > 0) {
        EXPECT_LT(target.cdf[t - 1], matched + 1e-12) << "level " << g << " -> " << t;
      }
    }
  }
}

TEST(PencilTone, HistogramEmaBlendsFrames) {
  std::mt19937_64 rng(fresh_seed());
  const double a = 0.3 + 0.6 * double(rng() % 1000) / 1000;
  const std::vector<uint32_t> c1 = random_counts(rng, 0), c2 = random_counts(rng, 1);
  double n1 = 0, n2 = 0;
  for (int g = 0; g < 256; ++g) n1 += c1[g], n2 += c2[g];
  std::vector<double> state(256);
  for (int g = 0; g < 256; ++g) update_source_histogram(c1.data(), n1, a, false, state.data(), g);
  for (int g = 0; g < 256; ++g) update_source_histogram(c2.data(), n2, a, true, state.data(), g);
  double sum = 0;
  for (int g = 0; g < 256; ++g) {
    EXPECT_NEAR(state[g], a * c1[g] / n1 + (1 - a) * c2[g] / n2, 1e-15) << "seed " << fresh_seed();
    sum += state[g];
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

// The combination's exp and pow of its own (the same bits on both backends)
// against float64's, over the inputs the stage gives them and beyond.
TEST(PencilMath, ExpLogAndPowOfTheirOwnFollowFloat64) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> exponent(-87.f, 88.f), unit(0.f, 1.f), gamma(0.1f, 10.f);
  auto ulps = [](double got, double want) { return std::abs(got - want) / (std::abs(want) * 0x1p-24); };
  double worst_exp = 0, worst_log = 0, worst_pow = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = exponent(rng);
    worst_exp = std::max(worst_exp, ulps(exp_same(x), std::exp(double(x))));
    // Positive floats of every binade: a random mantissa and exponent.
    const float y = std::ldexp(0.5f + 0.5f * unit(rng), int(rng() % 250) - 125);
    if (std::abs(y - 1.f) > 1e-3f) worst_log = std::max(worst_log, ulps(log_same(y), std::log(double(y))));
    const float s = unit(rng), g = gamma(rng);
    const double want = std::pow(double(s), double(g));
    // pow's exponent g ln s carries log's error, magnified by |g ln s|.
    if (want > 1e-30)
      worst_pow = std::max(worst_pow, ulps(pow_same(s, g), want) / (1 + std::abs(g * std::log(double(s)))));
  }
  EXPECT_LE(worst_exp, 4) << "seed " << seed;
  EXPECT_LE(worst_log, 4) << "seed " << seed;
  EXPECT_LE(worst_pow, 8) << "seed " << seed;
  EXPECT_NEAR(log_same(1.f + 0x1p-20f), std::log(1.0 + 0x1p-20), 1e-12);
  EXPECT_EQ(exp_same(0.f), 1.f);
  EXPECT_EQ(log_same(1.f), 0.f);
  EXPECT_EQ(pow_same(0.f, 2.f), 0.f);
  EXPECT_EQ(exp_same(-200.f), 0.f);
  EXPECT_TRUE(std::isinf(exp_same(100.f)));
  std::printf("worst: exp %.2f ulp, log %.2f ulp, pow %.2f ulp per unit of |g ln s|\n", worst_exp, worst_log,
              worst_pow);
}

TEST(PencilStroke, MedianAndGradientMatchBruteForce) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 4; ++trial) {
    const int w = 3 + int(rng() % 70), h = 1 + int(rng() % 50);
    std::vector<uint8_t> luma(size_t(w) * h);
    for (auto& v : luma) v = uint8_t(rng() % (trial % 2 ? 256 : 8) * (trial % 2 ? 1 : 30));
    for (GradientForm form : {GradientForm::l1, GradientForm::l2}) {
      std::vector<uint8_t> median(luma.size());
      std::vector<uint16_t> gradient(luma.size());
      cpu::median_gradient(luma.data(), w, h, form, median.data(), gradient.data());
      auto at = [&](int x, int y) { return luma[size_t(std::clamp(y, 0, h - 1)) * w + std::clamp(x, 0, w - 1)]; };
      std::vector<int> med(luma.size());
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          std::vector<int> n;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) n.push_back(at(x + dx, y + dy));
          std::sort(n.begin(), n.end());
          med[size_t(y) * w + x] = n[4];
          ASSERT_EQ(median[size_t(y) * w + x], n[4]) << "seed " << seed << " at " << x << "," << y;
        }
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const int c = med[size_t(y) * w + x];
          const int dx = x + 1 < w ? c - med[size_t(y) * w + x + 1] : 0;
          const int dy = y + 1 < h ? c - med[size_t(y + 1) * w + x] : 0;
          const int expected = form == GradientForm::l1 ? (std::abs(dx) + std::abs(dy) + 1) / 2
                                                        : int(std::lround(std::sqrt(0.5 * (dx * dx + dy * dy))));
          ASSERT_EQ(gradient[size_t(y) * w + x], expected) << "seed " << seed << " at " << x << "," << y;
        }
    }
  }
}

TEST(PencilStroke, KernelsAreRotatedLinesOfLu) {
  for (int half : {1, 4, 7, 18}) {
    for (int width : {0, 1, 2}) {
      const LineKernelSet k = build_line_kernels(half, width);
      for (int d = 0; d < kDirections; ++d) {
        std::vector<int> q(size_t(2 * half + 1) * (2 * half + 1), 0);
        for (int i = k.begin[d]; i < k.begin[d + 1]; ++i)
          for (int j = 0; j < k.runs[i].len; ++j)
            q[size_t(k.runs[i].lo + j + half) * (2 * half + 1) + k.runs[i].dx + half] = k.weights[k.runs[i].offset + j];
        for (int dy = -half; dy <= half; ++dy)
          for (int dx = -half; dx <= half; ++dx) {
            // Independent: bilinear sample of the rotated band, from first principles.
            const double a = d * M_PI / 8, u = dx * std::cos(a) + dy * std::sin(a), v = -dx * std::sin(a) + dy * std::cos(a);
            const double row = std::clamp(width + 1 - std::fabs(v), 0.0, 1.0);
            const double col = std::clamp(half + 1 - std::fabs(u), 0.0, 1.0);
            EXPECT_NEAR(q[size_t(dy + half) * (2 * half + 1) + dx + half] / 255.0, row * col, 0.5 / 255 + 1e-9)
                << "d " << d << " at " << dx << "," << dy;
          }
      }
      // Horizontal and vertical first-pass kernels are exactly Lu's centre row / column.
      if (width == 0) {
        ASSERT_EQ(k.begin[1] - k.begin[0], 2 * half + 1);
        for (int i = k.begin[0]; i < k.begin[1]; ++i) {
          EXPECT_EQ(k.runs[i].lo, 0);
          EXPECT_EQ(k.runs[i].len, 1);
          EXPECT_EQ(k.weights[k.runs[i].offset], 255);
        }
        ASSERT_EQ(k.begin[5] - k.begin[4], 1);
        EXPECT_EQ(k.runs[k.begin[4]].len, 2 * half + 1);
      }
    }
  }
}

TEST(PencilParams, TableDefaultsPresetsAndValidation) {
  const StageDescriptor d = make_pencil_descriptor();
  EXPECT_EQ(d.name, "pencil");
  const Params defaults = pencil_default_params();
  EXPECT_FALSE(d.validate(defaults).has_value());
  const PencilParams p = parse_pencil_params(defaults);
  EXPECT_EQ(p.tone_weights, (std::array<double, 3>{52, 37, 11}));
  EXPECT_EQ(p.tone_solve, ToneSolve::fast);
  EXPECT_DOUBLE_EQ(p.lambda, 0.2);
  EXPECT_EQ(resolve_line_length(0, {1920, 1080}), 37);  // 1080 / 30 = 36, made odd
  EXPECT_EQ(resolve_line_length(15, {1920, 1080}), 15);
  EXPECT_EQ(resolve_line_length(0, {40, 30}), 3);

  auto error_for = [&](const std::string& key, ParamValue v, bool given = true) {
    Params q = pencil_default_params();
    q.set(key, std::move(v));
    if (given) q.mark_given(key);
    const auto e = d.validate(q);
    return e ? *e : std::string();
  };
  EXPECT_NE(error_for("line_length", int64_t(2)).find("line_length"), std::string::npos);
  EXPECT_NE(error_for("weights", std::vector<double>{1, 2}).find("weights"), std::string::npos);
  EXPECT_NE(error_for("tone", std::string("custom")).find("tone"), std::string::npos);
  EXPECT_NE(error_for("texture", std::string("/nonexistent/pencil.png")).find("texture"), std::string::npos);
  Params q = pencil_default_params();
  q.set("weights", std::vector<double>{1, 2, 3});
  q.mark_given("weights");
  EXPECT_FALSE(d.validate(q).has_value());
  EXPECT_EQ(parse_pencil_params(q).tone_weights, (std::array<double, 3>{1, 2, 3}));
  q.set("tone", std::string("dark"));
  q.mark_given("tone");
  EXPECT_TRUE(d.validate(q).has_value());
  Params dark = pencil_default_params();
  dark.set("tone", std::string("dark"));
  EXPECT_EQ(parse_pencil_params(dark).tone_weights, (std::array<double, 3>{42, 29, 29}));
}

TEST(PencilTexture, BuiltinIsDeterministicTileableAndInRange) {
  const PencilTexture a = builtin_texture();
  ASSERT_EQ(a.width, kBuiltinTextureSize);
  ASSERT_EQ(a.texels.size(), size_t(a.width) * a.height);
  EXPECT_EQ(a.texels, builtin_texture().texels);
  double mean = 0, seam = 0, inner = 0;
  for (uint8_t v : a.texels) {
    ASSERT_GE(v, 1);
    ASSERT_LE(v, 254);
    mean += v;
  }
  mean /= a.texels.size();
  EXPECT_GT(mean, 140);
  EXPECT_LT(mean, 235);
  // Wrapping strokes: the jump across the tile seam is like any other column step.
  const int n = a.width;
  for (int y = 0; y < n; ++y) {
    seam += std::abs(int(a.texels[size_t(y) * n + n - 1]) - int(a.texels[size_t(y) * n]));
    inner += std::abs(int(a.texels[size_t(y) * n + n / 2 - 1]) - int(a.texels[size_t(y) * n + n / 2]));
  }
  EXPECT_LT(seam, 1.5 * inner + n);
  EXPECT_LT(a.mean_ln, 0);
  EXPECT_GT(a.mean_ln2, a.mean_ln * a.mean_ln);
}

TEST(PencilTexture, LoadsAnImageFileAndStretches) {
  std::mt19937_64 rng(fresh_seed());
  const int w = 23 + int(rng() % 40), h = 17 + int(rng() % 30);
  std::vector<uint8_t> pixels(size_t(w) * h);
  for (auto& v : pixels) v = uint8_t(1 + rng() % 254);
  const std::string path = (std::filesystem::temp_directory_path() / ("pencil_tex_" + std::to_string(rng()) + ".pgm")).string();
  {
    std::ofstream f(path, std::ios::binary);
    f << "P5\n" << w << " " << h << "\n255\n";
    f.write(reinterpret_cast<const char*>(pixels.data()), std::streamsize(pixels.size()));
  }
  const PencilTexture t = load_texture(path);
  std::filesystem::remove(path);
  ASSERT_EQ(t.width, w);
  ASSERT_EQ(t.height, h);
  EXPECT_EQ(t.texels, pixels);
  const PencilTexture s = fit_texture(t, TextureMode::stretch, {2 * w, 2 * h});
  ASSERT_EQ(s.width, 2 * w);
  // Bilinear 2x: the pixel at (2x+0.5)... lands between source texels x-1/4 and x+1/4 etc.
  for (int y = 1; y + 1 < h; ++y)
    for (int x = 1; x + 1 < w; ++x) {
      const double expect = 0.75 * (0.75 * t.texels[size_t(y) * w + x] + 0.25 * t.texels[size_t(y) * w + x - 1]) +
                            0.25 * (0.75 * t.texels[size_t(y - 1) * w + x] + 0.25 * t.texels[size_t(y - 1) * w + x - 1]);
      EXPECT_NEAR(s.texels[size_t(2 * y) * s.width + 2 * x], std::clamp(expect, 1.0, 254.0), 0.51);
    }
  EXPECT_THROW(load_texture("/nonexistent/texture.png"), sp::Error);
  EXPECT_EQ(fit_texture(t, TextureMode::tile, {1000, 1000}).texels, t.texels);
}

// A texture path in a config file is relative to the config's directory, not
// to the working directory; `builtin` and absolute paths are kept.
TEST(PencilTexture, ConfigPathIsRelativeToTheConfigFile) {
  std::mt19937_64 rng(fresh_seed());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pencil_cfg_" + std::to_string(rng())) / "nested";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "paper.pgm", std::ios::binary);
    f << "P5\n2 1\n255\n" << char(40) << char(200);
  }
  const std::filesystem::path config = dir / "pencil.yaml";
  {
    std::ofstream f(config);
    f << "pipeline:\n  - pencil: {texture: paper.pgm}\n  - pencil: {texture: builtin}\n  - pencil: {texture: "
      << (dir / "paper.pgm").string() << "}\n";
  }
  ASSERT_FALSE(std::filesystem::exists("paper.pgm"));  // only the config's directory has it
  const Config c = load_config(config.string());
  ASSERT_EQ(c.stages.size(), 3u);
  EXPECT_EQ(std::filesystem::path(c.stages[0].params.get_string("texture")), (dir / "paper.pgm").lexically_normal());
  EXPECT_EQ(c.stages[1].params.get_string("texture"), "builtin");
  EXPECT_EQ(std::filesystem::path(c.stages[2].params.get_string("texture")), dir / "paper.pgm");
  EXPECT_EQ(load_texture(c.stages[0].params.get_string("texture")).texels, (std::vector<uint8_t>{40, 200}));
  // The same relative name fails where the config's directory has no such file.
  {
    std::ofstream f(dir.parent_path() / "other.yaml");
    f << "pipeline:\n  - pencil: {texture: paper.pgm}\n";
  }
  EXPECT_THROW(load_config((dir.parent_path() / "other.yaml").string()), Error);
  // A device or a folder exists but is no image: say what it is, not that it is missing.
  for (const std::string& odd : std::vector<std::string>{"/dev/zero", dir.string()}) {
    std::ofstream(dir.parent_path() / "odd.yaml") << "pipeline:\n  - pencil: {texture: " << odd << "}\n";
    try {
      load_config((dir.parent_path() / "odd.yaml").string());
      ADD_FAILURE() << odd << " was accepted as a texture";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("odd.yaml:2:"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace sp::pencil
