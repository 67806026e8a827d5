// The contact sheet's geometry and the font of its labels.
#if STYLEPIPE_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif

#include <algorithm>
#include <filesystem>
#include <memory>

#include "orchestration/contact_sheet.h"
#include "pipeline/errors.h"

namespace sp {
namespace {

// DejaVu Sans averages about 0.6 em per Latin character; estimating keeps
// FreeType out of the layout, and a generous estimate only widens the cells.
constexpr double kGlyphWidthEm = 0.62;

int estimated_text_width(const std::string& text, int font_size) {
  return int(kGlyphWidthEm * font_size * double(text.size()) + 0.5);
}

}  // namespace

SheetLayout layout_sheet(const std::vector<std::vector<SheetTile>>& rows) {
  SheetLayout l;
  int widest = 1, tallest = 1;
  size_t longest_label = 0;
  for (const auto& row : rows)
    for (const SheetTile& t : row) {
      widest = std::max(widest, t.image.width);
      tallest = std::max(tallest, t.image.height);
      longest_label = std::max(longest_label, t.label.size());
    }
  // Labels readable beside small tiles, not shouting under large ones.
  l.font_size = std::clamp(tallest / 14, 12, 28);
  l.label_height = l.font_size * 2;
  l.picture_height = tallest;
  l.cell_width = std::max(widest, estimated_text_width(std::string(longest_label, 'x'), l.font_size) + kSheetGap);
  const int cell_height = l.picture_height + l.label_height;
  size_t columns = 1;
  for (const auto& row : rows) columns = std::max(columns, row.size());
  l.width = kSheetGap + int(columns) * (l.cell_width + kSheetGap);
  l.height = kSheetGap + int(rows.size()) * (cell_height + kSheetGap);
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<TileRect> rects;
    for (size_t c = 0; c < rows[r].size(); ++c) {
      const SheetTile& t = rows[r][c];
      TileRect rect;
      rect.width = t.image.width;
      rect.height = t.image.height;
      rect.cell_x = kSheetGap + int(c) * (l.cell_width + kSheetGap);
      rect.cell_y = kSheetGap + int(r) * (cell_height + kSheetGap);
      rect.x = rect.cell_x + (l.cell_width - t.image.width) / 2;
      rect.y = rect.cell_y + (l.picture_height - t.image.height) / 2;
      rect.label_y = rect.cell_y + l.picture_height;
      rect.label = t.label;
      rects.push_back(rect);
    }
    l.rows.push_back(std::move(rects));
  }
  return l;
}

std::string find_label_font(const std::string& requested) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!requested.empty()) {
    if (!fs::is_regular_file(requested, ec)) throw Error(ExitCode::no_input, "--font " + requested + ": no such file");
    return requested;
  }
  const char* fix = "install a font (Debian: fonts-dejavu-core) or pass --font FILE.ttf";
#if !STYLEPIPE_HAVE_FONTCONFIG
  throw Error(ExitCode::unavailable, std::string("this build has no fontconfig to find a font; ") + fix);
#else
  if (!FcInit()) throw Error(ExitCode::unavailable, std::string("fontconfig cannot start; ") + fix);
  std::unique_ptr<FcPattern, decltype(&FcPatternDestroy)> pattern(
      FcNameParse(reinterpret_cast<const FcChar8*>("sans-serif:scalable=true")), FcPatternDestroy);
  FcConfigSubstitute(nullptr, pattern.get(), FcMatchPattern);
  FcDefaultSubstitute(pattern.get());
  FcResult result = FcResultNoMatch;
  std::unique_ptr<FcPattern, decltype(&FcPatternDestroy)> match(FcFontMatch(nullptr, pattern.get(), &result),
                                                                FcPatternDestroy);
  FcChar8* file = nullptr;
  if (!match || FcPatternGetString(match.get(), FC_FILE, 0, &file) != FcResultMatch || !file ||
      !fs::is_regular_file(reinterpret_cast<const char*>(file), ec))
    throw Error(ExitCode::unavailable, std::string("no font for the labels: fontconfig finds none; ") + fix);
  return reinterpret_cast<const char*>(file);
#endif
}

}  // namespace sp
