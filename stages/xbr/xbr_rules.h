#pragma once
// The xBR rules for one input pixel, shared by the CPU and CUDA backends so
// both run the very same integer arithmetic.
//
// `exact` mode reproduces FFmpeg's libavfilter/vf_xbr.c bit for bit, which
// pins down several details that look arbitrary:
//  - FFmpeg works on AV_PIX_FMT_0RGB32 words (0xXXRRGGBB as a native uint32)
//    and compares whole words, padding byte included. Its packed blends work
//    out per channel (a + floor((b - a) * m / 8), and (a>>1)+(b>>1) for 50%),
//    so they give the same bytes on our R,G,B,A words; only the YUV key needs
//    to know which byte is red. Our alpha plays the padding byte.
//  - Colour distance is the sum of absolute byte differences of an integer
//    YUV key. FFmpeg tabulates the key for all 2^24 colours (a 64 MiB table);
//    yuv_key() computes the same word arithmetically (checked against the
//    table for every colour in the tests).
//  - eq() is a distance below 155; the 50% blend is (a>>1)+(b>>1) per channel.
//  - The corners run bottom-right, top-right, top-left, bottom-left, and later
//    corners blend into cells that earlier corners already wrote.
//  - Neighbours outside the image clamp to the edge.
#include <cstdint>

#include "pipeline/hd.h"

namespace sp::xbr {

// FFmpeg's rgbtoyuv[] entry for the colour of an RGBA word (R in the low
// byte, as RGBA8 bytes load on a little-endian machine): y << 16 | u << 8 | v,
// each in 0..255.
SP_HD uint32_t yuv_key(uint32_t rgba) {
  const int r = static_cast<int>(rgba & 0xFFu);
  const int g = static_cast<int>((rgba >> 8) & 0xFFu);
  const int b = static_cast<int>((rgba >> 16) & 0xFFu);
  const int rg = r - g, bg = b - g;
  // FFmpeg builds y incrementally from a non-negative start, which equals
  // this quotient. u and v divide possibly negative numerators and truncate
  // toward zero, as C does on both host and device.
  const uint32_t y = static_cast<uint32_t>(299 * r + 587 * g + 114 * b) / 1000u;
  const uint32_t u = static_cast<uint32_t>((-169 * rg + 500 * bg) / 1000) + 128u;
  const uint32_t v = static_cast<uint32_t>((500 * rg - 81 * bg) / 1000) + 128u;
  return (y << 16) | (u << 8) | v;
}

SP_HD int abs_int(int v) { return v < 0 ? -v : v; }

// FFmpeg's pixel_diff(): sum of the absolute differences of the three key bytes.
SP_HD int yuv_distance(uint32_t ka, uint32_t kb) {
  return abs_int(static_cast<int>(ka >> 16) - static_cast<int>(kb >> 16)) +
         abs_int(static_cast<int>((ka >> 8) & 0xFFu) - static_cast<int>((kb >> 8) & 0xFFu)) +
         abs_int(static_cast<int>(ka & 0xFFu) - static_cast<int>(kb & 0xFFu));
}

// FFmpeg's eq(): "similar enough" for the level-1 edge guards, in both modes.
constexpr int kEqualDistance = 155;

// --- Blends, exactly FFmpeg's ALPHA_BLEND_* macros (unsigned wrap-around
// included). They clear the top (alpha) byte; the caller restores alpha. ---
SP_HD uint32_t blend_half(uint32_t a, uint32_t b) {
  return ((a & 0x00FEFEFEu) >> 1) + ((b & 0x00FEFEFEu) >> 1);
}

// a + (b - a) * eighths / 8 per channel. eighths in {1, 2, 6, 7} equals
// FFmpeg's (1,3), (1,2), (3,2), (7,3) forms: the terms differ only above bit
// 28, which the channel masks drop.
SP_HD uint32_t blend_eighths(uint32_t a, uint32_t b, uint32_t eighths) {
  const uint32_t rb = 0x00FF00FFu, gm = 0x0000FF00u;
  return (rb & ((a & rb) + ((((b & rb) - (a & rb)) * eighths) >> 3))) |
         (gm & ((a & gm) + ((((b & gm) - (a & gm)) * eighths) >> 3)));
}

// The 5x5 neighbourhood of the centre pixel E at [2][2]; the four corner
// entries are never read. px: RGBA words; key: yuv_key().
struct Neighborhood {
  uint32_t px[5][5];
  uint32_t key[5][5];
};

// The two modes differ only in the level-2 rules, which decide whether an
// edge is shallow enough (a 2:1 slope) for the wider blend:
//   left: d(F,G)*2 <= d(H,C) && E != G && D != G   (and up, mirrored).
// On lossless pixel art d(F,G) == 0 when the slope continues, which makes
// `left` hold whatever d(H,C) is, and the guards compare exact colours.

// FFmpeg's rules: slope distances as they are, guards on the exact 32-bit word.
struct ExactRules {
  SP_HD int slope_dist(uint32_t ka, uint32_t kb) const { return yuv_distance(ka, kb); }
  SP_HD bool same_slope(uint32_t a, uint32_t b, uint32_t, uint32_t) const { return a == b; }
};

// For pixel art that went through a lossy codec, where no two pixels are
// exactly equal any more: in the level-2 rules, colours of equal alpha closer
// than `threshold` count as the same colour, so slope distances below it are
// zero and the guards treat such pairs as equal. The level-1 rules stay
// FFmpeg's.
struct ThresholdRules {
  int threshold = 1;
  SP_HD int slope_dist(uint32_t ka, uint32_t kb) const {
    const int d = yuv_distance(ka, kb);
    return d < threshold ? 0 : d;
  }
  SP_HD bool same_slope(uint32_t a, uint32_t b, uint32_t ka, uint32_t kb) const {
    return ((a ^ b) >> 24) == 0 && yuv_distance(ka, kb) < threshold;
  }
};

// Records nothing (the CUDA path and the steady-state CPU path).
struct NoTally {
  SP_HD void add(int, bool, bool) {}
};

// Offsets of a neighbour after `rot` quarter turns, mapping the bottom-right
// corner's frame onto the top-right (1), top-left (2) and bottom-left (3) ones.
SP_HD constexpr int rotated_dy(int rot, int dy, int dx) {
  return rot == 0 ? dy : rot == 1 ? -dx : rot == 2 ? -dy : dx;
}
SP_HD constexpr int rotated_dx(int rot, int dy, int dx) {
  return rot == 0 ? dx : rot == 1 ? dy : rot == 2 ? -dx : -dy;
}
// Index in the N x N output block of cell (r, c) of the bottom-right frame.
SP_HD constexpr int rotated_cell(int n, int rot, int r, int c) {
  return rot == 0   ? r * n + c
         : rot == 1 ? (n - 1 - c) * n + r
         : rot == 2 ? (n - 1 - r) * n + (n - 1 - c)
                    : c * n + (n - 1 - r);
}

template <int Rot>
struct RotatedView {
  const Neighborhood& nb;
  SP_HD uint32_t px(int dy, int dx) const { return nb.px[2 + rotated_dy(Rot, dy, dx)][2 + rotated_dx(Rot, dy, dx)]; }
  SP_HD uint32_t key(int dy, int dx) const {
    return nb.key[2 + rotated_dy(Rot, dy, dx)][2 + rotated_dx(Rot, dy, dx)];
  }
};

}  // namespace sp::xbr

#include "stages/xbr/xbr_corner.h"
