#pragma once
// The Delaunay triangulation computed in parallel vertical strips, exactly.
//
// Strip k owns the triangles whose centroid lies in its columns [x0, x1).
// It triangulates only the points within a margin m around it (inside the
// rectangle [L, R] x [0, H], L = x0 - m, R = x1 + m, with that rectangle's
// corners added where they are not real points) and keeps an owned triangle
// only when it is certified: no added corner, and its circumcircle strictly
// inside L < x < R. Such a circle holds the same points in the strip as in the
// whole set, so the triangle is a triangle of the full (unique, perturbed)
// Delaunay triangulation. A strip with an owned triangle it cannot certify
// doubles its margin and tries again. The union is then a set of distinct
// full-Delaunay triangles; having exactly 2n - 2 - h of them proves it is all
// of them. Otherwise triangulate() returns false and the caller falls back
// to the sequential triangulation (the same unique result, slower).
#include <cstdint>
#include <vector>

#include "stages/lowpoly/lowpoly_delaunay.h"

namespace sp::lowpoly {

// Whether the circumcircle of the counter-clockwise a, b, c lies strictly
// inside left < x < right (a side is not checked when its flag is false).
bool circle_within(uint32_t a, uint32_t b, uint32_t c, int left, bool check_left, int right, bool check_right);

class StripDelaunay {
 public:
  // `strips` workers; `margin` the first margin in pixels. Same contract as Delaunay::triangulate.
  bool triangulate(const std::vector<uint32_t>& points, int width, int height, int strips, int margin,
                   std::vector<Triangle>& out);
  int retries() const { return retries_; }

 private:
  struct Strip {
    Delaunay delaunay;
    std::vector<uint32_t> local;
    std::vector<Triangle> mesh, kept;
    int retries = 0;
  };
  void run_strip(Strip& s, const std::vector<uint32_t>& points, int x0, int x1, int width, int height, int margin);
  std::vector<Strip> strips_;
  int retries_ = 0;
};

}  // namespace sp::lowpoly
