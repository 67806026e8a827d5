#pragma once
// The picture of `stylepipe preview`: tiles in a grid of rows, each with its
// label under it, composed and lettered by libavfilter (pad, drawtext with
// FreeType, xstack).
#include <cstdint>
#include <string>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "pipeline/image.h"

namespace sp {

// A tightly packed RGBA8 picture in host memory.
struct RgbaImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // width * height * 4
};

struct SheetTile {
  RgbaImage image;
  std::string label;
};

struct TileRect {
  int x = 0, y = 0, width = 0, height = 0;  // where the tile's pixels are in the sheet, unscaled
  std::string label;
  int cell_x = 0, cell_y = 0;  // the cell's corner; its label band is below the picture area
  int label_y = 0;
};

// Every cell is as large as the largest tile (and wide enough for its label
// at the estimated glyph width); a tile sits centred in the upper part of its
// cell, its label centred in the band below. Cells are kSheetGap pixels apart
// and from the sheet's edges. Rows may have different lengths.
struct SheetLayout {
  int width = 0, height = 0;
  int cell_width = 0, picture_height = 0, label_height = 0, font_size = 0;
  std::vector<std::vector<TileRect>> rows;
};
inline constexpr int kSheetGap = 8;

// Pure: sizes and labels in, positions out.
SheetLayout layout_sheet(const std::vector<std::vector<SheetTile>>& rows);

// The sheet as an rgb24 frame: background grey, labels black in `font_file`.
// Throws sp::Error(internal) when libavfilter refuses the graph.
FramePtr render_sheet(const std::vector<std::vector<SheetTile>>& rows, const SheetLayout& layout,
                      const std::string& font_file);

// The font file for the labels: `requested` if given (it must exist, else
// no_input), otherwise fontconfig's match for a scalable sans-serif font.
// Throws sp::Error(unavailable) naming the fix when there is none.
std::string find_label_font(const std::string& requested);

}  // namespace sp
