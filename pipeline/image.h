#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipeline/hd.h"

namespace sp {

struct Size {
  int width = 0;
  int height = 0;
  bool operator==(const Size&) const = default;
};

// The pipeline's working format is RGBA8, 4 bytes per pixel, row pitch in bytes.
// The view does not own memory: on the CUDA backend `data` is device memory,
// on the CPU backend host memory.
struct RgbaView {
  uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  size_t pitch = 0;  // bytes per row

  SP_HD uint8_t* row(int y) const { return data + static_cast<size_t>(y) * pitch; }
  SP_HD uint32_t* row32(int y) const { return reinterpret_cast<uint32_t*>(row(y)); }
  Size size() const { return {width, height}; }
};

// Formats that the conversion kernels read and write directly (codec side).
enum class PixelFormat {
  rgba,     // packed R,G,B,A bytes
  bgr0,     // packed B,G,R,X bytes (emulators, x11grab)
  rgb24,    // packed R,G,B
  gray,     // 8-bit luma only
  yuv420p,  // 8-bit planar 4:2:0
  yuv444p,  // 8-bit planar 4:4:4
  nv12,     // 8-bit Y plane + interleaved UV 4:2:0
  p010,     // 16-bit little-endian, 10 significant bits in the high bits, Y + UV 4:2:0
};

const char* to_string(PixelFormat f);

enum class ColorMatrix { bt601, bt709, bt2020 };
enum class ColorRange { limited, full };

struct ColorSpec {
  ColorMatrix matrix = ColorMatrix::bt709;
  ColorRange range = ColorRange::limited;
};

// A codec-side picture: up to three planes, any of the PixelFormat layouts.
struct PlanarView {
  PixelFormat format = PixelFormat::yuv420p;
  int width = 0;
  int height = 0;
  uint8_t* plane[3] = {nullptr, nullptr, nullptr};
  size_t pitch[3] = {0, 0, 0};
  bool on_device = false;  // planes are CUDA device memory (a hardware decoder's surface)
};

// Byte layout of a format at a size (pitches are tight, rows 1-aligned unless given).
struct PlaneLayout {
  int count = 0;
  size_t pitch[3] = {0, 0, 0};
  int rows[3] = {0, 0, 0};
  size_t bytes(int i) const { return pitch[i] * static_cast<size_t>(rows[i]); }
  size_t total_bytes() const { return bytes(0) + bytes(1) + bytes(2); }
};
PlaneLayout plane_layout(PixelFormat format, int width, int height, size_t row_alignment = 1);

}  // namespace sp
