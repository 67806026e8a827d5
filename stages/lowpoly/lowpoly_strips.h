#pragma once
// The Delaunay triangulation computed in parallel vertical strips, exactly.
//
// The strips hold about equal numbers of points (boundaries at quantiles of
// x) and are handed to the workers dynamically. Strip k owns the triangles
// whose centroid lies in its columns [x0, x1).
// It triangulates only the points within a margin m around it (inside the
// rectangle [L, R] x [0, H], L = x0 - m, R = x1 + m, plus artificial points
// along its cut sides x = L and x = R, corners included). A local triangle is
// certified when its circumcircle lies strictly inside L < x < R (so it has
// no artificial vertex): that circle holds the same points locally as in the whole
// set, so the triangle is a triangle of the full (unique, perturbed) Delaunay
// triangulation. When every local triangle reaching into [x0, x1) is
// certified, the local triangle covering any owned centroid is a true
// triangle, hence the owned true triangle itself: the strip has all of its
// triangles. Otherwise it widens its sides past the failing circles (plus the
// margin) and tries again. As a safety
// net, the union must have exactly 2n - 2 - h triangles; if not,
// triangulate() returns false and the caller falls back to the sequential
// triangulation (the same unique result, slower).
#include <cstdint>
#include <vector>

#include "stages/lowpoly/lowpoly_delaunay.h"

namespace sp::lowpoly {

// Whether the circumcircle of the counter-clockwise a, b, c lies strictly
// inside left < x < right (a side is not checked when its flag is false).
bool circle_within(uint32_t a, uint32_t b, uint32_t c, int left, bool check_left, int right, bool check_right);

// Approximate x-extent of that circumcircle (a pixel wider each side), for retries.
void circle_x_range(uint32_t a, uint32_t b, uint32_t c, double* lo, double* hi);

class StripDelaunay {
 public:
  // Up to `strips` strips; the first margin of a strip is `margin_spacings`
  // times its mean vertex spacing. Same contract as Delaunay::triangulate.
  bool triangulate(const std::vector<uint32_t>& points, int width, int height, int strips, double margin_spacings,
                   std::vector<Triangle>& out);
  int retries() const { return retries_; }

 private:
  struct Strip {
    Delaunay delaunay;
    std::vector<uint32_t> local;
    std::vector<int> left_ys, right_ys;  // real points on the cut sides
    std::vector<Triangle> mesh, kept;
    int retries = 0;
  };
  void run_strip(Strip& s, const std::vector<uint32_t>& points, int x0, int x1, int width, int height, int margin,
                 int side_spacing);
  std::vector<Strip> strips_;
  std::vector<int> bounds_, column_counts_;
  int retries_ = 0;
};

}  // namespace sp::lowpoly
