#pragma once
// The seed's route to a mesh, kept as a measured diagnostic next to the exact
// star construction: a digital Voronoi diagram of the vertices by jump
// flooding (with a correction pass), then triangles from the 2x2 pixel squares
// that see 3 or 4 different sites, compacted by a scan. Per-pixel code shared
// by g++ and nvcc: the CPU and the GPU give identical labels and triangles.
//
// The raster is the lattice (W+1) x (H+1), so every vertex (0 <= x <= W,
// 0 <= y <= H) is a raster point and labels its own point. A point's label is
// the index of its nearest site, ties broken by the smaller packed site
// (a total order: the exact diagram is unique).
#include <cstdint>
#include <vector>

#include "stages/lowpoly/lowpoly_math.h"

namespace sp::lowpoly {

constexpr int32_t kNoSite = -1;

// Whether site a is nearer to (x, y) than site b (distance, then packed value).
SP_HD bool site_nearer(uint32_t a, uint32_t b, int x, int y) {
  const int64_t adx = unpack_x(a) - x, ady = unpack_y(a) - y, bdx = unpack_x(b) - x, bdy = unpack_y(b) - y;
  const int64_t da = adx * adx + ady * ady, db = bdx * bdx + bdy * bdy;
  return da != db ? da < db : a < b;
}

// One jump-flooding step at (x, y): the best label among the point's own and
// those `step` away in the 8 directions.
SP_HD int32_t jfa_pick(const int32_t* labels, const uint32_t* sites, int w1, int h1, int x, int y, int step) {
  int32_t best = labels[size_t(y) * w1 + x];
  for (int dy = -step; dy <= step; dy += step)
    for (int dx = -step; dx <= step; dx += step) {
      const int nx = x + dx, ny = y + dy;
      if ((dx == 0 && dy == 0) || nx < 0 || ny < 0 || nx >= w1 || ny >= h1) continue;
      const int32_t c = labels[size_t(ny) * w1 + nx];
      if (c != kNoSite && c != best && (best == kNoSite || site_nearer(sites[c], sites[best], x, y))) best = c;
    }
  return best;
}

// Triangles of the 2x2 square with top-left raster point (x, y), x < W, y < H:
// its four labels in the order (x,y), (x+1,y), (x+1,y+1), (x,y+1)
// (counter-clockwise in the orientation of lowpoly_math.h), with repeats
// removed; 3 distinct labels give one triangle, 4 give two. Returns the count.
SP_HD int square_triangles(const int32_t* labels, int w1, int x, int y, int32_t tri[6]) {
  const int32_t corner[4] = {labels[size_t(y) * w1 + x], labels[size_t(y) * w1 + x + 1],
                             labels[size_t(y + 1) * w1 + x + 1], labels[size_t(y + 1) * w1 + x]};
  int32_t v[4];
  int n = 0;
  for (int i = 0; i < 4; ++i) {
    bool seen = false;
    for (int j = 0; j < n; ++j) seen |= v[j] == corner[i];
    if (!seen) v[n++] = corner[i];
  }
  if (n < 3) return 0;
  tri[0] = v[0], tri[1] = v[1], tri[2] = v[2];
  if (n == 3) return 1;
  tri[3] = v[0], tri[4] = v[2], tri[5] = v[3];
  return 2;
}

// How the 2x2-square triangles compare with the exact mesh (the stage's
// square_* counters, equal on both backends).
struct SquareStats {
  int triangles = 0;        // from the squares, compacted (duplicates included)
  int not_ccw = 0;          // degenerate or clockwise: flips
  int delaunay = 0;         // counter-clockwise and a triangle of the exact mesh
  int distinct_delaunay = 0;
  int missing = 0;          // exact triangles no square produced: holes
  int overflow = 0;         // more triangles than the buffer holds (GPU; none kept past it)
};

enum class JfaVariant { plain, one_plus, plus_two, one_plus_plus_two };

// Step lengths: plain = N/2 .. 1 (N the power of two >= the longer side);
// one_plus (1+JFA) = a step of 1 first; plus_two (JFA+2) = two more steps, 2
// and 1; one_plus_plus_two (1+JFA+2) both (the stage's choice: the fewest errors).
std::vector<int> jfa_steps(int w1, int h1, JfaVariant variant);

// The CPU versions (parallel over rows), for the tests and the CPU backend.
void jfa_cpu(const std::vector<uint32_t>& sites, int width, int height, JfaVariant variant,
             std::vector<int32_t>& labels);
// Triangles of all 2x2 squares in raster order (site indices, 3 per triangle).
void square_triangles_cpu(const std::vector<int32_t>& labels, int width, int height, std::vector<int32_t>& tris);
// Compares square triangles (site indices) with the exact mesh.
SquareStats compare_with_mesh(const std::vector<uint32_t>& sites, const std::vector<int32_t>& square_tris,
                              const std::vector<Triangle>& mesh);

}  // namespace sp::lowpoly
