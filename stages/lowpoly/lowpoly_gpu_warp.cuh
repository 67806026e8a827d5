#pragma once
// Warp-wide versions of the star construction's searches (lowpoly_star.h),
// shared by the star kernels (lowpoly_gpu_mesh.cu) and the repair of the
// squares route (lowpoly_gpu_repair.cu). Every lane of the warp must call them
// with the same arguments; all lanes return the same vertex.
#include <cstdint>

#include "stages/lowpoly/lowpoly_star.h"

namespace sp::lowpoly {

// Warp-wide searches: the 32 lanes split the candidates of the box (cell rows
// are contiguous), then a butterfly of shuffles leaves the minimum of a strict
// total order in every lane, so all lanes take the same, uniform, path.
__device__ inline uint32_t warp_nearest(const VertexGrid& g, uint32_t p, int radius) {
  const int lane = threadIdx.x & 31;
  CellBox box = box_around(g, p, radius);
  for (;;) {
    uint32_t best = kNoVertex;
    for (int cy = box.y0; cy <= box.y1; ++cy) {
      const int32_t* row = g.start + size_t(cy) * g.cols;
      for (int i = row[box.x0] + lane; i < row[box.x1 + 1]; i += 32) {
        const uint32_t s = g.points[i];
        if (s != p && nearer_candidate(p, s, best)) best = s;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const uint32_t other = __shfl_xor_sync(0xFFFFFFFFu, best, o);
      if (other != kNoVertex && nearer_candidate(p, other, best)) best = other;
    }
    if (nearest_settled(g, p, best, box)) return best;
  }
}

__device__ inline uint32_t warp_third_vertex(const VertexGrid& g, uint32_t p, uint32_t q, int radius, int* tests) {
  const int lane = threadIdx.x & 31;
  CellBox box = box_around(g, p, radius);
  for (;;) {
    uint32_t best = kNoVertex;
    for (int cy = box.y0; cy <= box.y1; ++cy) {
      const int32_t* row = g.start + size_t(cy) * g.cols;
      for (int i = row[box.x0] + lane; i < row[box.x1 + 1]; i += 32) {
        const uint32_t s = g.points[i];
        if (s == p || s == q || orient_packed(p, q, s) <= 0) continue;
        ++*tests;
        if (better_third(p, q, s, best)) best = s;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const uint32_t other = __shfl_xor_sync(0xFFFFFFFFu, best, o);
      if (other != kNoVertex && better_third(p, q, other, best)) best = other;
    }
    if (third_settled(g, p, q, best, box)) return best;
  }
}

}  // namespace sp::lowpoly
