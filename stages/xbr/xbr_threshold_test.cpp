// mode: threshold on lossy pixel art, and the stage's table and counters.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>

#include "pipeline/buffer_pool.h"
#include "stages/xbr/xbr.h"
#include "stages/xbr/xbr_test_util.h"

namespace sp::test {
namespace {

const StageDescriptor& xbr_descriptor() {
  const StageDescriptor* d = StageRegistry::instance().find("xbr");
  if (!d) throw std::runtime_error("xbr is not registered");
  return *d;
}

XbrSettings default_threshold_settings(int scale) {
  Params p = default_params(xbr_descriptor().params);
  p.set("scale", int64_t(scale));
  p.set("mode", std::string("threshold"));
  return xbr_settings_from(p);
}

HostImage crop(const HostImage& src, int x0, int y0, int w, int h) {
  HostImage out(w, h);
  for (int y = 0; y < h; ++y)
    std::memcpy(&out.pixels[size_t(y) * w * 4], &src.pixels[(size_t(y0 + y) * src.width + x0) * 4], size_t(w) * 4);
  return out;
}

// Emulator-sized frames: synthetic pixel art, plus tile-sheet crops where
// mirrormagic-data is installed.
std::vector<HostImage> clean_clip(std::mt19937_64& rng) {
  std::vector<HostImage> frames;
  for (int i = 0; i < 6; ++i) frames.push_back(synthetic_pixel_art(256, 240, 16, rng));
  for (const auto& f : pixel_art_files()) {
    const HostImage sheet = load_image_rgba(f);
    if (sheet.width >= 512 && sheet.height >= 480) {
      frames.push_back(crop(sheet, 0, 0, 256, 240));
      frames.push_back(crop(sheet, 256, 240, 256, 240));
    }
  }
  return frames;
}

int level2_bits(uint8_t cell) { return std::popcount(unsigned(cell & 0x0F)); }

TEST(XbrThreshold, TakesLevel2WhereStrictEqualityDoesNotOnLossyPixelArt) {
  std::mt19937_64 rng(fresh_seed());
  SCOPED_TRACE("seed " + std::to_string(fresh_seed()));
  const std::vector<HostImage> clean = clean_clip(rng);
  const std::vector<HostImage> lossy = lossy_roundtrip(clean, 28);
  ASSERT_EQ(lossy.size(), clean.size());

  XbrSettings exact;
  exact.scale = 2;
  const XbrSettings threshold = default_threshold_settings(2);
  // Per corner: level 2 on the lossless source (the truth), and on the lossy
  // clip in each mode.
  long truth = 0, exact_taken = 0, exact_right = 0, only_threshold = 0, only_threshold_right = 0;
  long threshold_taken = 0, threshold_right = 0;
  for (size_t f = 0; f < clean.size(); ++f) {
    const auto ref = xbr_decision_map(clean[f].view(), exact);
    const auto ex = xbr_decision_map(lossy[f].view(), exact);
    const auto th = xbr_decision_map(lossy[f].view(), threshold);
    for (size_t i = 0; i < ref.size(); ++i) {
      truth += level2_bits(ref[i]);
      exact_taken += level2_bits(ex[i]);
      exact_right += level2_bits(ex[i] & ref[i]);
      threshold_taken += level2_bits(th[i]);
      threshold_right += level2_bits(th[i] & ref[i]);
      only_threshold += level2_bits(th[i] & ~ex[i]);
      only_threshold_right += level2_bits(th[i] & ~ex[i] & ref[i]);
    }
  }
  std::printf("level-2 corners: lossless %ld; lossy exact %ld (%ld right); lossy threshold %ld (%ld right), "
              "%ld of them not taken by exact (%ld right)\n",
              truth, exact_taken, exact_right, threshold_taken, threshold_right, only_threshold,
              only_threshold_right);
  ASSERT_GT(truth, 1000) << "the clean clip must have level-2 edges to recover";
  // Threshold mode takes level 2 at a measurable number of corners where
  // strict equality does not...
  EXPECT_GT(only_threshold, truth / 20);
  // ...and those are right (level 2 on the lossless source too) clearly more
  // often than strict equality's own level-2 corners on the same clip.
  const double exact_precision = double(exact_right) / double(exact_taken);
  EXPECT_GT(double(only_threshold_right) / double(only_threshold), 1.2 * exact_precision);
  // Overall, its level-2 decisions agree better with the lossless ones.
  EXPECT_GT(double(threshold_right) / double(threshold_taken), 1.5 * exact_precision);
}

// Threshold mode changes only the level-2 rules: level-1 decisions are the
// same, and so is every output block where neither mode took level 2.
TEST(XbrThreshold, ChangesOnlyLevel2Decisions) {
  std::mt19937_64 rng(fresh_seed());
  SCOPED_TRACE("seed " + std::to_string(fresh_seed()));
  const std::vector<HostImage> lossy = lossy_roundtrip({synthetic_pixel_art(160, 120, 12, rng)}, 30);
  ASSERT_EQ(lossy.size(), 1u);
  const HostImage& in = lossy[0];
  long differing_blocks = 0;
  for (int n = 2; n <= 4; ++n) {
    XbrSettings exact;
    exact.scale = n;
    const XbrSettings threshold = default_threshold_settings(n);
    const auto ex_map = xbr_decision_map(in.view(), exact);
    const auto th_map = xbr_decision_map(in.view(), threshold);
    XbrStage ex_stage(exact), th_stage(threshold);
    const HostImage ex_out = run_stage_cpu(ex_stage, in), th_out = run_stage_cpu(th_stage, in);
    for (int y = 0; y < in.height; ++y) {
      for (int x = 0; x < in.width; ++x) {
        const size_t i = size_t(y) * in.width + x;
        ASSERT_EQ(ex_map[i] >> 4, th_map[i] >> 4) << "level-1 decision differs at " << x << "," << y;
        bool same_block = true;
        for (int r = 0; r < n; ++r)
          same_block &= std::memcmp(&ex_out.pixels[(size_t(y * n + r) * ex_out.width + x * n) * 4],
                                    &th_out.pixels[(size_t(y * n + r) * th_out.width + x * n) * 4], size_t(n) * 4) == 0;
        if ((ex_map[i] & 0x0F) == 0 && (th_map[i] & 0x0F) == 0) {
          ASSERT_TRUE(same_block) << "block differs at " << x << "," << y << " without level 2, scale " << n;
        }
        differing_blocks += !same_block;
      }
    }
  }
  EXPECT_GT(differing_blocks, 0) << "the modes never differed: the clip exercises nothing";
}

TEST(XbrStage, ParameterTable) {
  const StageDescriptor& d = xbr_descriptor();
  ASSERT_EQ(d.params.size(), 3u);
  EXPECT_EQ(d.params[0].name, "scale");
  EXPECT_EQ(d.params[0].type, ParamType::integer);
  EXPECT_EQ(d.params[0].min, 2.0);
  EXPECT_EQ(d.params[0].max, 4.0);
  EXPECT_EQ(d.params[1].name, "mode");
  EXPECT_EQ(d.params[1].choices, (std::vector<std::string>{"exact", "threshold"}));
  EXPECT_EQ(std::get<std::string>(d.params[1].default_value), "exact");
  EXPECT_EQ(d.params[2].name, "threshold");
  for (const auto& p : d.params) EXPECT_FALSE(p.doc.empty()) << p.name;

  Params p = default_params(d.params);
  EXPECT_FALSE(d.validate(p).has_value());
  p.set("threshold", 20.0);
  p.mark_given("threshold");
  const auto err = d.validate(p);
  ASSERT_TRUE(err.has_value()) << "threshold without mode: threshold must be rejected";
  EXPECT_NE(err->find("threshold"), std::string::npos) << *err;
  p.set("mode", std::string("threshold"));
  EXPECT_FALSE(d.validate(p).has_value());
  p.set("threshold", 20.5);
  EXPECT_EQ(xbr_settings_from(p).threshold, 21);
}

TEST(XbrStage, SizeFloorAndCounters) {
  std::mt19937_64 rng(fresh_seed());
  const HostImage in = synthetic_pixel_art(53, 41, 6, rng);
  for (int n = 2; n <= 4; ++n) {
    Params p = default_params(xbr_descriptor().params);
    p.set("scale", int64_t(n));
    auto stage = xbr_descriptor().create(p);
    const HostImage out = run_stage_cpu(*stage, in);
    EXPECT_EQ(out.width, 53 * n);
    EXPECT_EQ(out.height, 41 * n);
    EXPECT_EQ(stage->floor_bytes({53, 41}, {53 * n, 41 * n}), 4.0 * (53 * 41) * (1 + n * n));
    // The counters report the frame's decisions, as the decision map sees them.
    XbrSettings s;
    s.scale = n;
    long edges = 0, level2 = 0;
    for (uint8_t cell : xbr_decision_map(in.view(), s)) {
      edges += std::popcount(unsigned(cell >> 4));
      level2 += std::popcount(unsigned(cell & 0x0F));
    }
    const StageCounters c = stage->counters();
    ASSERT_EQ(c.count("xbr_edge_corners"), 1u);
    EXPECT_EQ(c.at("xbr_edge_corners"), double(edges));
    EXPECT_EQ(c.at("xbr_level2_corners"), double(level2));
    EXPECT_GT(edges, 0);
  }
}

}  // namespace
}  // namespace sp::test
