#pragma once
// Exact in-circle predicates on lattice points, compiled by g++ and nvcc alike:
// the host triangulation (lowpoly_delaunay.cpp) and the GPU mesh (lowpoly_star.h)
// decide every co-circular case the same way, so they build the same mesh.
#include <cstdint>

#include "stages/lowpoly/lowpoly_math.h"

namespace sp::lowpoly {

SP_HD int sign_of(int64_t v) { return (v > 0) - (v < 0); }

SP_HD int64_t orient_packed(uint32_t a, uint32_t b, uint32_t c) {
  return orient(unpack_x(a), unpack_y(a), unpack_x(b), unpack_y(b), unpack_x(c), unpack_y(c));
}

// CGAL's Perturbation_order: x, then y (packed y is the high half, so compare fields).
SP_HD bool xy_less(uint32_t p, uint32_t q) {
  return unpack_x(p) != unpack_x(q) ? unpack_x(p) < unpack_x(q) : unpack_y(p) < unpack_y(q);
}

// Sign of the in-circle determinant of d against the counter-clockwise a, b, c (+1: inside).
SP_HD int in_circle(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  // Coordinates are at most 2^14, so every term below fits in 64 bits:
  // differences 2^14, lifts 2^29, 2x2 minors 2^29, products 2^58, sum < 2^60.
  const int64_t dx = unpack_x(d), dy = unpack_y(d);
  const int64_t adx = unpack_x(a) - dx, ady = unpack_y(a) - dy;
  const int64_t bdx = unpack_x(b) - dx, bdy = unpack_y(b) - dy;
  const int64_t cdx = unpack_x(c) - dx, cdy = unpack_y(c) - dy;
  const int64_t alift = adx * adx + ady * ady, blift = bdx * bdx + bdy * bdy, clift = cdx * cdx + cdy * cdy;
  return sign_of(alift * (bdx * cdy - bdy * cdx) + blift * (cdx * ady - cdy * adx) + clift * (adx * bdy - ady * bdx));
}

// A transcription of CGAL's Triangulation_2::side_of_oriented_circle(p0, p1,
// p2, p, perturb = true) (CGAL 5.5, Triangulation_2.h): never 0 for four
// distinct points with a, b, c not collinear. +1: d is inside.
SP_HD int in_circle_perturbed(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  const int s = in_circle(a, b, c, d);
  if (s != 0) return s;
  uint32_t sorted[4] = {a, b, c, d};
  for (int i = 1; i < 4; ++i)  // insertion sort by the perturbation order
    for (int j = i; j > 0 && xy_less(sorted[j], sorted[j - 1]); --j) {
      const uint32_t t = sorted[j];
      sorted[j] = sorted[j - 1], sorted[j - 1] = t;
    }
  for (int i = 3; i > 0; --i) {
    const uint32_t q = sorted[i];
    if (q == d) return -1;
    int64_t o = 0;
    if (q == c && (o = orient_packed(a, b, d)) != 0) return sign_of(o);
    if (q == b && (o = orient_packed(a, d, c)) != 0) return sign_of(o);
    if (q == a && (o = orient_packed(d, b, c)) != 0) return sign_of(o);
  }
  return -1;
}

}  // namespace sp::lowpoly
