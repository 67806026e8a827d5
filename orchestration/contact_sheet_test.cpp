// The contact sheet's geometry and picture, in process: random tiles of random
// sizes must come back bit for bit from the rectangles the layout gives, and
// every label band must carry text.
#include "orchestration/contact_sheet.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/support/test_support.h"

namespace sp {
namespace {

std::vector<std::vector<SheetTile>> random_rows(std::mt19937_64& rng) {
  std::vector<std::vector<SheetTile>> rows(1 + rng() % 3);
  for (auto& row : rows) {
    row.resize(2 + rng() % 3);
    for (SheetTile& t : row) {
      t.image.width = 8 + int(rng() % 120);
      t.image.height = 6 + int(rng() % 90);
      t.image.pixels.resize(size_t(t.image.width) * t.image.height * 4);
      for (uint8_t& b : t.image.pixels) b = uint8_t(rng());
      t.label = "tile " + std::to_string(rng() % 100000);
    }
  }
  return rows;
}

TEST(ContactSheet, CellsAreDisjointAndHoldTheirTilesAboveTheirLabels) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int round = 0; round < 50; ++round) {
    const auto rows = random_rows(rng);
    const SheetLayout l = layout_sheet(rows);
    ASSERT_EQ(l.rows.size(), rows.size());
    std::vector<TileRect> all;
    for (size_t r = 0; r < rows.size(); ++r) {
      ASSERT_EQ(l.rows[r].size(), rows[r].size());
      for (size_t c = 0; c < rows[r].size(); ++c) {
        const TileRect& t = l.rows[r][c];
        EXPECT_EQ(t.width, rows[r][c].image.width);
        EXPECT_EQ(t.height, rows[r][c].image.height);
        EXPECT_EQ(t.label, rows[r][c].label);
        EXPECT_GE(t.x, t.cell_x);
        EXPECT_LE(t.x + t.width, t.cell_x + l.cell_width);
        EXPECT_GE(t.y, t.cell_y);
        EXPECT_LE(t.y + t.height, t.label_y);
        EXPECT_LE(t.label_y + l.label_height, l.height);
        EXPECT_LE(t.cell_x + l.cell_width, l.width);
        if (c > 0) {
          EXPECT_GT(t.cell_x, l.rows[r][c - 1].cell_x + l.cell_width - 1);  // left to right, apart
        }
        if (r > 0) {
          EXPECT_GT(t.cell_y, l.rows[r - 1][0].label_y + l.label_height - 1);  // rows below each other
        }
      }
    }
  }
}

TEST(ContactSheet, RenderedTilesAreExactAndLabelled) {
  std::mt19937_64 rng(test::fresh_seed());
  const std::string font = find_label_font("");
  for (int round = 0; round < 3; ++round) {
    const auto rows = random_rows(rng);
    const SheetLayout l = layout_sheet(rows);
    const FramePtr sheet = render_sheet(rows, l, font);
    ASSERT_EQ(sheet->format, AV_PIX_FMT_RGB24);
    for (size_t r = 0; r < rows.size(); ++r)
      for (size_t c = 0; c < rows[r].size(); ++c) {
        const RgbaImage& image = rows[r][c].image;
        const TileRect& t = l.rows[r][c];
        size_t differing = 0;
        for (int y = 0; y < image.height; ++y)
          for (int x = 0; x < image.width; ++x)
            for (int ch = 0; ch < 3; ++ch)
              differing += sheet->data[0][size_t(t.y + y) * sheet->linesize[0] + size_t(t.x + x) * 3 + ch] !=
                           image.pixels[(size_t(y) * image.width + x) * 4 + ch];
        EXPECT_EQ(differing, 0u) << t.label;
        int dark = 0;
        for (int y = t.label_y; y < t.label_y + l.label_height; ++y)
          for (int x = t.cell_x; x < t.cell_x + l.cell_width; ++x)
            dark += sheet->data[0][size_t(y) * sheet->linesize[0] + size_t(x) * 3] < 100;
        EXPECT_GT(dark, 10) << "no text under " << t.label;
      }
  }
}

}  // namespace
}  // namespace sp
