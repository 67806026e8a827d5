#pragma once
// The pencil texture H of Lu et al.: a built-in one generated in code
// (deterministic, tileable, no binary assets) or any image FFmpeg can decode.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/image.h"

namespace sp::pencil {

enum class TextureMode { tile, stretch };

struct PencilTexture {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> texels;  // gray, row-major, tight
  // ln(H) per texel value; values are clamped to 1..254 so that 0 < H < 1 and ln H < 0.
  std::array<float, 256> ln_table{};
  double mean_ln = 0;   // E[ln H] over the texels
  double mean_ln2 = 0;  // E[ln^2 H]
};

constexpr int kBuiltinTextureSize = 512;

// Hatching strokes plus paper grain, wrapping at the edges so tiles join.
PencilTexture builtin_texture();
// Decodes the first picture of `path` to gray. Throws sp::Error (config) if it cannot.
PencilTexture load_texture(const std::string& path);
// The texture as used at `frame`: tiled as is, or stretched (bilinear) to the frame.
PencilTexture fit_texture(const PencilTexture& source, TextureMode mode, Size frame);
// Fills ln_table, mean_ln and mean_ln2 from the texels.
void compute_texture_statistics(PencilTexture& t);

}  // namespace sp::pencil
