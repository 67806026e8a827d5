#include <fmt/format.h>

#include "pipeline/convert.h"
#include "pipeline/convert_formats.h"
#include "pipeline/errors.h"
#include "pipeline/parallel.h"

namespace sp {

using namespace convert_detail;

namespace {

// Rows per task: enough work per chunk to amortize the pool's hand-off.
constexpr int kMinRowsPerTask = 8;

}  // namespace

void check_convert_sizes(const PlanarView& planar, const RgbaView& rgba) {
  if (planar.width != rgba.width || planar.height != rgba.height || planar.width <= 0 || planar.height <= 0)
    throw Error(ExitCode::internal,
                fmt::format("colour conversion between {} {}x{} and RGBA {}x{}: sizes differ", to_string(planar.format),
                            planar.width, planar.height, rgba.width, rgba.height));
}

double convert_floor_bytes(PixelFormat format, Size size) {
  return double(plane_layout(format, size.width, size.height).total_bytes()) + 4.0 * size.width * size.height;
}

void convert_to_rgba_cpu(const PlanarView& src, const ColorSpec& color, const RgbaView& dst) {
  check_convert_sizes(src, dst);
  visit_source(src, [&](const auto& s) {
    using Src = std::decay_t<decltype(s)>;
    const YuvToRgb k = make_yuv_to_rgb(color, Src::kBits);
    if constexpr (Src::kSubsampled) {
      const int cw = (dst.width + 1) / 2, ch = (dst.height + 1) / 2;
      parallel_for(
          ch,
          [&](int j0, int j1) {
            for (int j = j0; j < j1; ++j)
              for (int i = 0; i < cw; ++i) yuv420_block_to_rgba(s, k, i, j, dst);
          },
          kMinRowsPerTask / 2);
    } else {
      parallel_for(
          dst.height,
          [&](int y0, int y1) {
            for (int y = y0; y < y1; ++y) {
              uint32_t* out = dst.row32(y);
              for (int x = 0; x < dst.width; ++x) out[x] = s.rgba(x, y, k);
            }
          },
          kMinRowsPerTask);
    }
  });
}

void convert_from_rgba_cpu(const RgbaView& src, const ColorSpec& color, const PlanarView& dst) {
  check_convert_sizes(dst, src);
  visit_dest(dst, [&](const auto& d) {
    using Dst = std::decay_t<decltype(d)>;
    const RgbToYuv k = make_rgb_to_yuv(color, Dst::kBits);
    if constexpr (Dst::kSubsampled) {
      const int cw = (src.width + 1) / 2, ch = (src.height + 1) / 2;
      parallel_for(
          ch,
          [&](int j0, int j1) {
            for (int j = j0; j < j1; ++j)
              for (int i = 0; i < cw; ++i) rgba_block_to_yuv420(src, k, i, j, d);
          },
          kMinRowsPerTask / 2);
    } else {
      parallel_for(
          src.height,
          [&](int y0, int y1) {
            for (int y = y0; y < y1; ++y) {
              const uint32_t* in = src.row32(y);
              for (int x = 0; x < src.width; ++x) d.put(x, y, in[x], k);
            }
          },
          kMinRowsPerTask);
    }
  });
}

}  // namespace sp
