#pragma once
// The Delaunay triangulation vertex by vertex (the "star" construction used by
// the GPU mesh; g++ and nvcc compile the same code, so the CPU runs it in the
// tests). Every vertex p walks its own ring of neighbours, counter-clockwise:
//
// - Start edge. Interior p: its nearest vertex q. No point lies inside or on
//   the circle with diameter pq (a point on it would be nearer than q), so pq
//   is an edge of the Delaunay triangulation under any infinitesimal
//   perturbation, CGAL's included. Border p: the next border vertex
//   counter-clockwise around the frame (a hull edge).
// - Step. Given the Delaunay edge p -> q, the triangle on its left is (p, q, r)
//   for the r left of pq that no other left point beats under the perturbed
//   in-circle test (a strict total order of the circles through p and q).
//   Candidates come from a uniform grid of vertices; the answer is certified
//   when the frame-clipped bounding box of its circumcircle (plus a pixel)
//   lies inside the searched cells, else the search widens and repeats.
// - Stop. Interior p: back at the start edge. Border p: at the previous border
//   vertex (the other hull edge).
//
// Each triangle is emitted by its smallest vertex (packed value), so every
// triangle of the unique perturbed Delaunay triangulation (the host's and
// CGAL's) comes out once, counter-clockwise, with no adjacency structure and
// no communication between vertices.
#include <cmath>
#include <cstdint>

#include "stages/lowpoly/lowpoly_predicates.h"

namespace sp::lowpoly {

constexpr uint32_t kNoVertex = 0xFFFFFFFFu;

// Vertices bucketed by cells of `cell` x `cell` pixels over the lattice [0,W] x [0,H].
struct VertexGrid {
  const uint32_t* points = nullptr;  // packed, grouped by cell (any order within a cell)
  const int32_t* start = nullptr;    // cols * rows + 1 offsets into points
  int cols = 0, rows = 0, cell = 1, width = 0, height = 0;
};

SP_HD int grid_cols(int width, int cell) { return width / cell + 1; }
SP_HD int cell_index(const VertexGrid& g, uint32_t p) { return (unpack_y(p) / g.cell) * g.cols + unpack_x(p) / g.cell; }

struct CellBox {
  int x0, y0, x1, y1;  // inclusive cell ranges
};

SP_HD int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

SP_HD CellBox box_around(const VertexGrid& g, uint32_t p, int radius) {
  const int cx = unpack_x(p) / g.cell, cy = unpack_y(p) / g.cell;
  return {clampi(cx - radius, 0, g.cols - 1), clampi(cy - radius, 0, g.rows - 1), clampi(cx + radius, 0, g.cols - 1),
          clampi(cy + radius, 0, g.rows - 1)};
}

SP_HD bool box_is_full(const VertexGrid& g, const CellBox& b) {
  return b.x0 == 0 && b.y0 == 0 && b.x1 == g.cols - 1 && b.y1 == g.rows - 1;
}

SP_HD bool box_contains(const CellBox& outer, const CellBox& inner) {
  return inner.x0 >= outer.x0 && inner.y0 >= outer.y0 && inner.x1 <= outer.x1 && inner.y1 <= outer.y1;
}

SP_HD CellBox box_union(const CellBox& a, const CellBox& b) {
  return {a.x0 < b.x0 ? a.x0 : b.x0, a.y0 < b.y0 ? a.y0 : b.y0, a.x1 > b.x1 ? a.x1 : b.x1, a.y1 > b.y1 ? a.y1 : b.y1};
}

SP_HD CellBox box_doubled(const VertexGrid& g, const CellBox& b) {
  const int dx = b.x1 - b.x0 + 1, dy = b.y1 - b.y0 + 1;
  return {clampi(b.x0 - dx, 0, g.cols - 1), clampi(b.y0 - dy, 0, g.rows - 1), clampi(b.x1 + dx, 0, g.cols - 1),
          clampi(b.y1 + dy, 0, g.rows - 1)};
}

// The box grown on every side by half its size (at least a cell), but not
// past `limit`; always larger than `b` when `limit` reaches outside it.
// (Jumping straight to a candidate's cells is costly: a poor first candidate
// can have a circle spanning the frame; growing geometrically keeps the number
// of rescans logarithmic when cells are far too small.)
SP_HD CellBox box_grown_toward(const CellBox& b, const CellBox& limit) {
  const int gx = (b.x1 - b.x0 + 2) / 2, gy = (b.y1 - b.y0 + 2) / 2;
  return {b.x0 - gx > limit.x0 ? b.x0 - gx : (b.x0 < limit.x0 ? b.x0 : limit.x0),
          b.y0 - gy > limit.y0 ? b.y0 - gy : (b.y0 < limit.y0 ? b.y0 : limit.y0),
          b.x1 + gx < limit.x1 ? b.x1 + gx : (b.x1 > limit.x1 ? b.x1 : limit.x1),
          b.y1 + gy < limit.y1 ? b.y1 + gy : (b.y1 > limit.y1 ? b.y1 : limit.y1)};
}

// Cells holding every lattice point of the closed disk, clipped to the frame
// (a pixel of slack covers the rounding of the centre and radius).
SP_HD CellBox cells_of_disk(const VertexGrid& g, double cx, double cy, double radius) {
  const double lim_x = g.width, lim_y = g.height;
  const double x0 = fmax(0.0, cx - radius - 1), x1 = fmin(lim_x, cx + radius + 1);
  const double y0 = fmax(0.0, cy - radius - 1), y1 = fmin(lim_y, cy + radius + 1);
  if (x0 > x1 || y0 > y1) return {0, 0, -1, -1};  // (cannot happen for a disk touching the frame)
  return {clampi(int(x0) / g.cell, 0, g.cols - 1), clampi(int(y0) / g.cell, 0, g.rows - 1),
          clampi(int(x1) / g.cell, 0, g.cols - 1), clampi(int(y1) / g.cell, 0, g.rows - 1)};
}

// Calls f(s) for every vertex in the box.
template <class F>
SP_HD void for_each_in_box(const VertexGrid& g, const CellBox& b, F&& f) {
  for (int cy = b.y0; cy <= b.y1; ++cy) {
    const int32_t* row = g.start + size_t(cy) * g.cols;
    for (int i = row[b.x0]; i < row[b.x1 + 1]; ++i) f(g.points[i]);  // cells of a row are contiguous
  }
}

SP_HD int64_t dist2(uint32_t a, uint32_t b) {
  const int64_t dx = unpack_x(a) - unpack_x(b), dy = unpack_y(a) - unpack_y(b);
  return dx * dx + dy * dy;
}

// Whether candidate s is nearer to p than the current best (distance, then packed value).
SP_HD bool nearer_candidate(uint32_t p, uint32_t s, uint32_t best) {
  if (best == kNoVertex) return true;
  const int64_t ds = dist2(p, s), db = dist2(p, best);
  return ds < db || (ds == db && s < best);
}

// One search round of nearest_vertex is over: true when `best` (the nearest
// in `box`) is final, else `box` is widened for another round.
SP_HD bool nearest_settled(const VertexGrid& g, uint32_t p, uint32_t best, CellBox& box) {
  if (best == kNoVertex) {
    if (box_is_full(g, box)) return true;
    box = box_doubled(g, box);
    return false;
  }
  const CellBox need = cells_of_disk(g, unpack_x(p), unpack_y(p), sqrt(double(dist2(p, best))));
  if (box_contains(box, need)) return true;
  box = box_grown_toward(box, need);
  return false;
}

// The nearest other vertex (the smallest packed value among equals), or kNoVertex.
SP_HD uint32_t nearest_vertex(const VertexGrid& g, uint32_t p, int radius) {
  CellBox box = box_around(g, p, radius);
  for (;;) {
    uint32_t best = kNoVertex;
    for_each_in_box(g, box, [&](uint32_t s) {
      if (s != p && nearer_candidate(p, s, best)) best = s;
    });
    if (nearest_settled(g, p, best, box)) return best;
  }
}

// The circumcircle of the counter-clockwise p, q, r (centre and radius, in double:
// every product below is exact, coordinates being below 2^14).
SP_HD void circumcircle(uint32_t p, uint32_t q, uint32_t r, double* cx, double* cy, double* radius) {
  const double bx = unpack_x(q) - unpack_x(p), by = unpack_y(q) - unpack_y(p);
  const double ex = unpack_x(r) - unpack_x(p), ey = unpack_y(r) - unpack_y(p);
  const double d = 2 * (bx * ey - by * ex), b2 = bx * bx + by * by, e2 = ex * ex + ey * ey;
  const double ux = (ey * b2 - by * e2) / d, uy = (bx * e2 - ex * b2) / d;
  *cx = unpack_x(p) + ux, *cy = unpack_y(p) + uy, *radius = sqrt(ux * ux + uy * uy);
}

// Whether candidate s beats the current best third vertex for edge p -> q:
// s is inside the circle through p, q, best (perturbed: never a tie).
SP_HD bool better_third(uint32_t p, uint32_t q, uint32_t s, uint32_t best) {
  return best == kNoVertex || (s != best && in_circle_perturbed(p, q, best, s) > 0);
}

// One search round of third_vertex is over: true when `best` (the best left
// of p -> q in `box`) is final, else `box` is widened for another round.
SP_HD bool third_settled(const VertexGrid& g, uint32_t p, uint32_t q, uint32_t best, CellBox& box) {
  if (best == kNoVertex) {
    if (box_is_full(g, box)) return true;
    box = box_doubled(g, box);
    return false;
  }
  double cx, cy, rad;
  circumcircle(p, q, best, &cx, &cy, &rad);
  const CellBox need = cells_of_disk(g, cx, cy, rad);
  if (box_contains(box, need)) return true;
  box = box_grown_toward(box, need);
  return false;
}

// The third vertex of the Delaunay triangle left of the Delaunay edge p -> q,
// or kNoVertex when no vertex lies left of it (a hull edge). `tests` counts
// the in-circle tests (statistics).
SP_HD uint32_t third_vertex(const VertexGrid& g, uint32_t p, uint32_t q, int radius, int* tests) {
  CellBox box = box_around(g, p, radius);
  for (;;) {
    uint32_t best = kNoVertex;
    for_each_in_box(g, box, [&](uint32_t s) {
      if (s == p || s == q || orient_packed(p, q, s) <= 0) return;
      ++*tests;
      if (better_third(p, q, s, best)) best = s;
    });
    if (third_settled(g, p, q, best, box)) return best;
  }
}

// Walks the ring of p from `first` (the start edge) and calls emit(q, r) for
// every triangle (p, q, r), counter-clockwise around p. `last` is the border
// vertex that ends an open ring (kNoVertex for interior p, whose ring closes).
// Returns the number of triangles, or -1 when the walk did not end within
// max_steps or found no triangle where one must be (never on valid input).
// walk_ring takes the step as find(q) -> r (the GPU passes a warp-wide search).
template <class Find, class Emit>
SP_HD int walk_ring(uint32_t first, uint32_t last, int max_steps, Find&& find, Emit&& emit) {
  if (first == kNoVertex) return -1;
  uint32_t q = first;
  for (int k = 0; k < max_steps; ++k) {
    if (q == last) return k;
    const uint32_t r = find(q);
    if (r == kNoVertex) return -1;
    emit(q, r);
    if (r == first) return last == kNoVertex ? k + 1 : -1;
    q = r;
  }
  return -1;
}

template <class Emit>
SP_HD int walk_star(const VertexGrid& g, uint32_t p, uint32_t first, uint32_t last, int max_steps, int radius,
                    int* tests, Emit&& emit) {
  return walk_ring(first, last, max_steps, [&](uint32_t q) { return third_vertex(g, p, q, radius, tests); }, emit);
}

// Whether p emits triangle (p, q, r): it is the triangle's smallest vertex.
SP_HD bool owns_triangle(uint32_t p, uint32_t q, uint32_t r) { return p < q && p < r; }

// Position of a border vertex along the frame's perimeter, counter-clockwise
// from (0,0): bottom side left to right, right side upward (y grows), top side
// right to left, left side downward. Ring starts and ends follow this order.
SP_HD int64_t perimeter_key(uint32_t p, int width, int height) {
  const int x = unpack_x(p), y = unpack_y(p);
  if (y == 0 && x < width) return x;
  if (x == width && y < height) return int64_t(width) + y;
  if (y == height && x > 0) return int64_t(width) + height + (width - x);
  return int64_t(2) * width + height + (height - y);
}

}  // namespace sp::lowpoly
