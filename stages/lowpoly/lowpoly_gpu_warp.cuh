#pragma once
// Warp- and group-wide versions of the star construction's searches (lowpoly_star.h),
// shared by the star kernels (lowpoly_gpu_mesh.cu) and the repair of the
// squares route (lowpoly_gpu_repair.cu). Every lane of a group must call them
// with the same arguments; all its lanes return the same vertex.
#include <cstdint>

#include "stages/lowpoly/lowpoly_star.h"

namespace sp::lowpoly {

// Group-wide searches: the kLanes lanes of a group (kLanes consecutive lanes of
// a warp, a power of two) split the candidates of the box (cell rows are
// contiguous), then a butterfly of shuffles leaves the minimum of a strict
// total order in every lane, so all lanes of the group take the same, uniform,
// path. Groups of one warp diverge from each other: shuffles name their group.
template <int kLanes>
struct LaneGroup {
  static_assert(kLanes >= 2 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "a power of two lanes");
  __device__ static int lane() { return int(threadIdx.x) & (kLanes - 1); }
  __device__ static unsigned mask() {
    return kLanes == 32 ? 0xFFFFFFFFu : ((1u << kLanes) - 1) << (int(threadIdx.x) & 31 & ~(kLanes - 1));
  }
  // The group's minimum under `better` (kNoVertex loses), in every lane.
  template <class Better>
  __device__ static uint32_t best_of(uint32_t best, Better better) {
    for (int o = kLanes / 2; o > 0; o >>= 1) {
      const uint32_t other = __shfl_xor_sync(mask(), best, o);
      if (other != kNoVertex && better(other, best)) best = other;
    }
    return best;
  }
  __device__ static int sum(int v) {
    for (int o = kLanes / 2; o > 0; o >>= 1) v += __shfl_xor_sync(mask(), v, o);
    return v;
  }
};

// Calls visit(s) for the group's share of the points in the box's cells.
template <int kLanes, class Visit>
__device__ void for_group_share(const VertexGrid& g, const CellBox& box, Visit visit) {
  for (int cy = box.y0; cy <= box.y1; ++cy) {
    const int32_t* row = g.start + size_t(cy) * g.cols;
    for (int i = row[box.x0] + LaneGroup<kLanes>::lane(); i < row[box.x1 + 1]; i += kLanes) visit(g.points[i]);
  }
}

template <int kLanes = 32>
__device__ uint32_t group_nearest(const VertexGrid& g, uint32_t p, int radius) {
  CellBox box = box_around(g, p, radius);
  const auto nearer = [p](uint32_t a, uint32_t b) { return nearer_candidate(p, a, b); };
  for (;;) {
    uint32_t best = kNoVertex;
    for_group_share<kLanes>(g, box, [&](uint32_t s) {
      if (s != p && nearer(s, best)) best = s;
    });
    best = LaneGroup<kLanes>::best_of(best, nearer);
    if (nearest_settled(g, p, best, box)) return best;
  }
}

template <int kLanes = 32>
__device__ uint32_t group_third_vertex(const VertexGrid& g, uint32_t p, uint32_t q, int radius, int* tests) {
  CellBox box = box_around(g, p, radius);
  const auto better = [p, q](uint32_t a, uint32_t b) { return better_third(p, q, a, b); };
  for (;;) {
    uint32_t best = kNoVertex;
    for_group_share<kLanes>(g, box, [&](uint32_t s) {
      if (s == p || s == q || orient_packed(p, q, s) <= 0) return;
      ++*tests;
      if (better(s, best)) best = s;
    });
    best = LaneGroup<kLanes>::best_of(best, better);
    if (third_settled(g, p, q, best, box)) return best;
  }
}

}  // namespace sp::lowpoly
