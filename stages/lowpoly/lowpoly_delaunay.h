#pragma once
// Exact, deterministic Delaunay triangulation of lattice points in the frame
// rectangle [0,W] x [0,H] (host code, shared by both backends).
//
// Incremental insertion with Lawson flips, starting from the rectangle's
// four corners: points are located by a visibility walk from the last
// insertion (in a serpentine strip order, so walks stay short), split their
// triangle (or the edge they lie on) and flip edges until every edge is
// locally Delaunay. Predicates are exact (64/128-bit integers). Co-circular
// points are resolved by CGAL's symbolic perturbation (the points ordered by
// x, then y), so the triangulation is unique: it does not depend on the
// insertion order and equals CGAL's Delaunay_triangulation_2 on the same points.
#include <cstdint>
#include <vector>

#include "stages/lowpoly/lowpoly_math.h"

namespace sp::lowpoly {

// orient(a, b, c) > 0: counter-clockwise as defined in lowpoly_math.h.
// Sign (+1, 0, -1) of the in-circle test of d against the circle through the
// counter-clockwise a, b, c, without perturbation.
int incircle_sign(uint32_t a, uint32_t b, uint32_t c, uint32_t d);
// With CGAL's symbolic perturbation: never 0 for four distinct points with
// a, b, c not collinear. +1: d is inside (the edge must flip).
int incircle_perturbed(uint32_t a, uint32_t b, uint32_t c, uint32_t d);

class Delaunay {
 public:
  // Triangulates `points` (packed, distinct, all inside [0,W] x [0,H], the
  // four corners among them). Appends the triangles to `out` (cleared first).
  // Returns false (and leaves `out` empty) when an input violates that contract.
  bool triangulate(const std::vector<uint32_t>& points, int width, int height, std::vector<Triangle>& out);

  // Statistics of the last call.
  int64_t walk_steps() const { return walk_steps_; }
  int64_t flips() const { return flips_; }

 private:
  int locate(int start, int px, int py);
  void insert(int point, int tri);
  void legalize(int tri);
  void set(int t, int v0, int v1, int v2, int n0, int n1, int n2);
  void relink(int neighbour, int from, int to);
  int new_triangle();

  std::vector<uint32_t> pts_;    // packed coordinates by point index
  std::vector<int32_t> verts_;   // 3 per triangle, counter-clockwise
  std::vector<int32_t> adj_;     // 3 per triangle: across the edge opposite vertex i, -1 = hull
  std::vector<int32_t> stack_;   // triangles whose edge opposite vertex 0 needs a check
  std::vector<uint64_t> order_;  // insertion order keys
  int64_t walk_steps_ = 0, flips_ = 0;
};

}  // namespace sp::lowpoly
