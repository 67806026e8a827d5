// points_out: the dots of a frame as SVG circles or CSV rows (for plotters).
#include <fmt/format.h>

#include <cstdio>

#include "pipeline/errors.h"
#include "stages/halftone/halftone.h"

namespace sp::halftone {

namespace {

std::string frame_path(const std::string& pattern, int64_t frame) {
  const size_t at = pattern.find('%');
  if (at == std::string::npos) return pattern;
  std::vector<char> buf(pattern.size() + 32);
  std::snprintf(buf.data(), buf.size(), pattern.c_str(), int(frame));  // NOLINT: user pattern, one int
  return buf.data();
}

std::string hex(const std::array<double, 3>& c) {
  return fmt::format("#{:02x}{:02x}{:02x}", int(c[0] + 0.5), int(c[1] + 0.5), int(c[2] + 0.5));
}

}  // namespace

void write_points(const std::string& pattern, int64_t frame, const float2* pos, int count, Size size, float radius,
                  const std::array<double, 3>& background, const std::array<double, 3>& dot_color) {
  const std::string path = frame_path(pattern, frame);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error(ExitCode::io_error, fmt::format("halftone: cannot write points_out '{}'", path));
  const bool svg = path.size() >= 4 && path.compare(path.size() - 4, 4, ".svg") == 0;
  std::string text;
  if (svg) {
    text = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n"
        "<rect width=\"{0}\" height=\"{1}\" fill=\"{2}\"/>\n<g fill=\"{3}\">\n",
        size.width, size.height, hex(background), hex(dot_color));
    for (int i = 0; i < count; ++i) text += fmt::format("<circle cx=\"{:.3f}\" cy=\"{:.3f}\" r=\"{:.3f}\"/>\n", pos[i].x, pos[i].y, radius);
    text += "</g>\n</svg>\n";
  } else {
    text = "x,y\n";
    for (int i = 0; i < count; ++i) text += fmt::format("{:.4f},{:.4f}\n", pos[i].x, pos[i].y);
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw Error(ExitCode::io_error, fmt::format("halftone: writing '{}' failed", path));
}

}  // namespace sp::halftone
