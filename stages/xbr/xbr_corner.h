#pragma once
// One corner of the xBR expansion (FFmpeg's FILT2/FILT3/FILT4), written for
// the bottom-right corner and rotated by template. Included by xbr_rules.h.
//
// Names follow FFmpeg, in the frame where this corner is the bottom-right one:
//        B1
//    A0 PA PB PC C4
//    D0 PD PE PF F4
//    G0 PG PH PI I4
//       G5 H5 I5
// The block update is written as selects on the decided case rather than as
// FFmpeg's if/else ladder, so a warp whose threads take different cases runs
// one straight sequence; each select reproduces the ladder's exact writes.

namespace sp::xbr {

// Cells of the output block addressed in the bottom-right corner's frame.
template <int N, int Rot>
struct CornerCells {
  // Reference to cell (r, c) of the bottom-right frame.
  SP_HD static uint32_t& at(uint32_t (&blk)[N * N], int r, int c) { return blk[rotated_cell(N, Rot, r, c)]; }
};

// Called once the corner blends (e <= i). rule: the level-1 edge rule fired;
// left/up: its level-2 refinements (both imply rule). Without rule, the
// corner cell gets the weak 50% blend.
template <int N, int Rot>
SP_HD void apply_corner(uint32_t (&blk)[N * N], uint32_t px, bool rule, bool left, bool up) {
  using C = CornerCells<N, Rot>;
  const bool both = left && up;
  if constexpr (N == 2) {
    uint32_t& n1 = C::at(blk, 0, 1);
    uint32_t& n2 = C::at(blk, 1, 0);
    uint32_t& n3 = C::at(blk, 1, 1);
    const uint32_t o1 = n1, o2 = n2, o3 = n3;
    n3 = (left || up) ? blend_eighths(o3, px, both ? 7u : 6u) : blend_half(o3, px);
    n2 = left ? blend_eighths(o2, px, 2u) : o2;
    n1 = up ? blend_eighths(both ? o2 : o1, px, 2u) : o1;
  } else if constexpr (N == 3) {
    uint32_t& n2 = C::at(blk, 0, 2);
    uint32_t& n5 = C::at(blk, 1, 2);
    uint32_t& n6 = C::at(blk, 2, 0);
    uint32_t& n7 = C::at(blk, 2, 1);
    uint32_t& n8 = C::at(blk, 2, 2);
    const uint32_t o2 = n2, o5 = n5, o6 = n6, o7 = n7, o8 = n8;
    n8 = (left || up) ? px : rule ? blend_eighths(o8, px, 7u) : blend_half(o8, px);
    n7 = rule ? blend_eighths(o7, px, left ? 6u : up ? 2u : 1u) : o7;
    n6 = left ? blend_eighths(o6, px, 2u) : o6;
    n5 = rule ? blend_eighths(both ? o7 : o5, px, both ? 6u : left ? 2u : up ? 6u : 1u) : o5;
    n2 = up ? blend_eighths(both ? o6 : o2, px, 2u) : o2;
  } else {
    static_assert(N == 4, "xBR scales 2, 3 and 4");
    uint32_t& n3 = C::at(blk, 0, 3);
    uint32_t& n7 = C::at(blk, 1, 3);
    uint32_t& n10 = C::at(blk, 2, 2);
    uint32_t& n11 = C::at(blk, 2, 3);
    uint32_t& n12 = C::at(blk, 3, 0);
    uint32_t& n13 = C::at(blk, 3, 1);
    uint32_t& n14 = C::at(blk, 3, 2);
    uint32_t& n15 = C::at(blk, 3, 3);
    const uint32_t o3 = n3, o7 = n7, o10 = n10, o11 = n11, o12 = n12, o13 = n13, o14 = n14, o15 = n15;
    n15 = rule ? px : blend_half(o15, px);
    n14 = left ? px : up ? blend_eighths(o14, px, 6u) : rule ? blend_half(o14, px) : o14;
    n11 = up ? px : left ? blend_eighths(o11, px, 6u) : rule ? blend_half(o11, px) : o11;
    n13 = left ? blend_eighths(o13, px, 6u) : o13;
    n12 = left ? blend_eighths(o12, px, 2u) : o12;
    n10 = (left || up) ? blend_eighths(both ? o12 : o10, px, 2u) : o10;
    n3 = up ? blend_eighths(both ? o12 : o3, px, 2u) : o3;
    n7 = up ? blend_eighths(both ? o13 : o7, px, 6u) : o7;
  }
}

template <int N, int Rot, class Rules, class Tally>
SP_HD void xbr_corner(const Neighborhood& nb, const Rules& rules, uint32_t (&blk)[N * N], Tally& tally) {
  const RotatedView<Rot> v{nb};
  const uint32_t PE = v.px(0, 0), PF = v.px(0, 1), PH = v.px(1, 0);
  const uint32_t kE = v.key(0, 0), kF = v.key(0, 1), kH = v.key(1, 0);
  // Inside a flat area (E continues right or down): nothing to do. A real
  // branch: whole warps of flat pixel art skip the distance work together.
  if (PE == PH || PE == PF) return;

  const uint32_t PB = v.px(-1, 0), PC = v.px(-1, 1), PD = v.px(0, -1), PG = v.px(1, -1);
  const uint32_t kB = v.key(-1, 0), kC = v.key(-1, 1), kD = v.key(0, -1), kG = v.key(1, -1), kI = v.key(1, 1);
  const uint32_t kF4 = v.key(0, 2), kI4 = v.key(1, 2), kH5 = v.key(2, 0), kI5 = v.key(2, 1);
  auto d = [](uint32_t a, uint32_t b) { return yuv_distance(a, b); };
  auto eq = [](uint32_t a, uint32_t b) { return yuv_distance(a, b) < kEqualDistance; };

  const int e = d(kE, kC) + d(kE, kG) + d(kI, kH5) + d(kI, kF4) + (d(kH, kF) << 2);
  const int i = d(kH, kD) + d(kH, kI5) + d(kF, kI4) + d(kF, kB) + (d(kE, kI) << 2);
  if (e > i) return;

  const uint32_t px = d(kE, kF) <= d(kE, kH) ? PF : PH;
  bool edge;
  if constexpr (N == 3) {
    edge = (!eq(kF, kB) && !eq(kF, kC)) || (!eq(kH, kD) && !eq(kH, kG)) ||
           (eq(kE, kI) && ((!eq(kF, kF4) && !eq(kF, kI4)) || (!eq(kH, kH5) && !eq(kH, kI5)))) || eq(kE, kG) ||
           eq(kE, kC);
  } else {
    edge = (!eq(kF, kB) && !eq(kH, kD)) || (eq(kE, kI) && !eq(kF, kI4) && !eq(kH, kI5)) || eq(kE, kG) ||
           eq(kE, kC);
  }
  const bool rule = e < i && edge;
  const int ke = rules.slope_dist(kF, kG), ki = rules.slope_dist(kH, kC);
  const bool left = rule && (ke << 1) <= ki && !rules.same_slope(PE, PG, kE, kG) && !rules.same_slope(PD, PG, kD, kG);
  const bool up = rule && ke >= (ki << 1) && !rules.same_slope(PE, PC, kE, kC) && !rules.same_slope(PB, PC, kB, kC);
  // Tallies: which corner, level-1 edge rule, level-2 (shallow slope) rule.
  tally.add(Rot, rule, left || up);
  apply_corner<N, Rot>(blk, px, rule, left, up);
}

// Expands the centre pixel of `nb` into an N x N block of RGBA words (alpha
// byte undefined; see finish_pixel()).
template <int N, class Rules, class Tally>
SP_HD void xbr_expand(const Neighborhood& nb, const Rules& rules, uint32_t (&blk)[N * N], Tally& tally) {
  const uint32_t PE = nb.px[2][2];
  for (int k = 0; k < N * N; ++k) blk[k] = PE;
  // FFmpeg's order: bottom-right, top-right, top-left, bottom-left.
  xbr_corner<N, 0>(nb, rules, blk, tally);
  xbr_corner<N, 1>(nb, rules, blk, tally);
  xbr_corner<N, 2>(nb, rules, blk, tally);
  xbr_corner<N, 3>(nb, rules, blk, tally);
}

// Output RGBA word of a block cell: FFmpeg's RGB, and the alpha of the input
// pixel being expanded (nearest neighbour), since FFmpeg has no alpha.
SP_HD uint32_t finish_pixel(uint32_t cell, uint32_t centre) {
  return (cell & 0x00FFFFFFu) | (centre & 0xFF000000u);
}

}  // namespace sp::xbr
