#pragma once
// Repair of the 2x2-square triangles into the exact Delaunay triangulation
// (the `mesh: squares` route; g++ and nvcc compile the same code, so the CPU
// tests run the GPU's algorithm). Two steps:
//
// - Keep. A counter-clockwise square triangle (a, b, c) is kept only when its
//   circumcircle is empty under the perturbed in-circle test: every vertex in
//   the grid cells covering the (frame-clipped) disk lies outside. That is the
//   definition of a triangle of the unique perturbed Delaunay triangulation,
//   so a kept triangle is exact; flipped, degenerate and non-Delaunay square
//   triangles are dropped (the edge flips of GPU-DT happen implicitly: only
//   the Delaunay side of a flip can pass). Each kept triangle gives each of its
//   vertices p a known link edge q -> r (the triangle (p, q, r)).
// - Repair. Every vertex walks its ring counter-clockwise as the star
//   construction does (lowpoly_star.h), but takes a step from the known link
//   edges when one starts at the current neighbour and runs the certified
//   third-vertex search only for the gaps: the holes the squares left. A vertex
//   whose ring the kept triangles close needs no search at all. Known edges are
//   a subset of the true ring (kept triangles are exact), so the walk visits
//   exactly the true ring, whatever mix of lookups and searches it takes.
#include <cstdint>

#include "stages/lowpoly/lowpoly_star.h"

namespace sp::lowpoly {

// Whether no vertex of the grid lies inside the circumcircle of the
// counter-clockwise a, b, c (perturbed: co-circular vertices are decided by
// CGAL's tie-break, as everywhere in the mesh). `tests` counts in-circle tests.
SP_HD bool circle_is_empty(const VertexGrid& g, uint32_t a, uint32_t b, uint32_t c, int* tests) {
  double cx, cy, rad;
  circumcircle(a, b, c, &cx, &cy, &rad);
  const CellBox box = cells_of_disk(g, cx, cy, rad);
  for (int row = box.y0; row <= box.y1; ++row) {
    const int32_t* cells = g.start + size_t(row) * g.cols;
    for (int i = cells[box.x0]; i < cells[box.x1 + 1]; ++i) {
      const uint32_t s = g.points[i];
      if (s == a || s == b || s == c) continue;
      ++*tests;
      if (in_circle_perturbed(a, b, c, s) > 0) return false;
    }
  }
  return true;
}

// Known link edges a vertex keeps (the GPU's fixed slots; the CPU route keeps
// as many by default, so both count the same). About 6 are true ones, plus
// duplicates; the ones past the slots are dropped, which costs searches, never
// correctness (counter known_overflow).
constexpr int kKnownSlots = 16;

// Why a square triangle was dropped, or that it is kept.
enum class SquareVerdict { kept, flipped, not_delaunay };

SP_HD SquareVerdict judge_square_triangle(const VertexGrid& g, uint32_t a, uint32_t b, uint32_t c, int* tests) {
  if (orient_packed(a, b, c) <= 0) return SquareVerdict::flipped;  // clockwise or degenerate
  return circle_is_empty(g, a, b, c, tests) ? SquareVerdict::kept : SquareVerdict::not_delaunay;
}

// The known successor of q around p: r of a known link edge q -> r, or kNoVertex.
SP_HD uint32_t known_next(const uint32_t* known_q, const uint32_t* known_r, int count, uint32_t q) {
  for (int k = 0; k < count; ++k)
    if (known_q[k] == q) return known_r[k];
  return kNoVertex;
}

// Counts of one vertex's repaired walk.
struct RingRepairCounts {
  int searches = 0;        // ring steps found by the certified search (not known)
  int owned_known = 0;     // triangles this vertex owns that came from the squares
  int owned_searched = 0;  // triangles this vertex owns that the repair found
};

// Walks the ring of p from `first` to `last` (as walk_ring), stepping by the
// known link edges where they exist and by search(q) elsewhere; emit(q, r) for
// every triangle. `first` for an interior p: known_q[0] when there is a known
// edge (a Delaunay neighbour), else its nearest vertex (the caller's).
template <class Search, class Emit>
SP_HD int repair_ring(uint32_t p, uint32_t first, uint32_t last, int max_steps, const uint32_t* known_q,
                      const uint32_t* known_r, int count, RingRepairCounts* counts, Search&& search, Emit&& emit) {
  bool searched = false;
  return walk_ring(
      first, last, max_steps,
      [&](uint32_t q) {
        const uint32_t r = known_next(known_q, known_r, count, q);
        searched = r == kNoVertex;
        if (!searched) return r;
        ++counts->searches;
        return search(q);
      },
      [&](uint32_t q, uint32_t r) {
        if (owns_triangle(p, q, r)) ++(searched ? counts->owned_searched : counts->owned_known);
        emit(q, r);
      });
}

// The repair of one vertex in two phases (the GPU runs the first for every
// vertex with one thread each, the second with one warp per open vertex; the
// CPU runs both here). `first` of an interior vertex: known_q[0] when it has a
// known edge, else kNoVertex (phase 2's caller then starts at its nearest vertex).
SP_HD uint32_t ring_start(bool border, uint32_t next_border, const uint32_t* known_q, int count) {
  return border ? next_border : count > 0 ? known_q[0] : kNoVertex;
}

// Phase 1: the ring from known edges alone: its steps, or -1 when a gap (or
// no start) leaves it open. Emits as it goes: an open vertex's output is redone.
template <class Emit>
SP_HD int close_ring_from_known(uint32_t p, uint32_t first, uint32_t last, int max_steps, const uint32_t* known_q,
                                const uint32_t* known_r, int count, RingRepairCounts* counts, Emit&& emit) {
  if (first == kNoVertex) return -1;
  return repair_ring(p, first, last, max_steps, known_q, known_r, count, counts, [](uint32_t) { return kNoVertex; },
                     emit);
}

// Square statistics of the repair, summed over a frame (equal on both
// backends when no vertex had more known edges than the GPU stores).
struct RepairStats {
  int square_triangles = 0;    // from the 2x2 squares, duplicates included
  int flipped = 0;             // dropped: clockwise or degenerate
  int not_delaunay = 0;        // dropped: a vertex inside the circumcircle
  int certified = 0;           // kept, duplicates included
  int kept = 0;                // distinct kept: mesh triangles taken from the squares
  int repaired_triangles = 0;  // mesh triangles the repair found (the squares' holes)
  int repaired_vertices = 0;   // vertices whose ring needed at least one search
  int repair_searches = 0;     // ring steps searched (each triangle's search is made by up to 3 vertices)
  int known_overflow = 0;      // known link edges past a vertex's slots (dropped; costs searches)
  int square_overflow = 0;     // square triangles past the GPU's buffer (never stored; costs searches)
};

}  // namespace sp::lowpoly
