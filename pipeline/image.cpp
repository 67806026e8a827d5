#include "pipeline/image.h"

namespace sp {

const char* to_string(PixelFormat f) {
  switch (f) {
    case PixelFormat::rgba: return "rgba";
    case PixelFormat::bgr0: return "bgr0";
    case PixelFormat::rgb24: return "rgb24";
    case PixelFormat::gray: return "gray";
    case PixelFormat::yuv420p: return "yuv420p";
    case PixelFormat::yuv444p: return "yuv444p";
    case PixelFormat::nv12: return "nv12";
    case PixelFormat::p010: return "p010";
  }
  return "?";
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

PlaneLayout plane_layout(PixelFormat format, int width, int height, size_t row_alignment) {
  PlaneLayout l;
  const size_t w = width, cw = (width + 1) / 2;
  const int ch = (height + 1) / 2;
  auto plane = [&](int i, size_t row_bytes, int rows) {
    l.pitch[i] = align_up(row_bytes, row_alignment);
    l.rows[i] = rows;
    l.count = i + 1;
  };
  switch (format) {
    case PixelFormat::rgba:
    case PixelFormat::bgr0: plane(0, 4 * w, height); break;
    case PixelFormat::rgb24: plane(0, 3 * w, height); break;
    case PixelFormat::gray: plane(0, w, height); break;
    case PixelFormat::yuv420p:
      plane(0, w, height);
      plane(1, cw, ch);
      plane(2, cw, ch);
      break;
    case PixelFormat::yuv444p:
      plane(0, w, height);
      plane(1, w, height);
      plane(2, w, height);
      break;
    case PixelFormat::nv12:
      plane(0, w, height);
      plane(1, 2 * cw, ch);
      break;
    case PixelFormat::p010:
      plane(0, 2 * w, height);
      plane(1, 4 * cw, ch);
      break;
  }
  return l;
}

}  // namespace sp
