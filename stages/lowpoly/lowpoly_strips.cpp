#include "stages/lowpoly/lowpoly_strips.h"

#include <algorithm>
#include <cmath>

#include "pipeline/parallel.h"

namespace sp::lowpoly {

namespace {
using i128 = __int128;
}

bool circle_within(uint32_t a, uint32_t b, uint32_t c, int left, bool check_left, int right, bool check_right) {
  // Centre a + (ux, uy) / D, radius^2 (ux^2 + uy^2) / D^2, D = 2 orient > 0:
  // x_centre - r > left  <=>  s = (ax - left) D + ux > 0 and s^2 > ux^2 + uy^2.
  const int64_t bx = unpack_x(b) - unpack_x(a), by = unpack_y(b) - unpack_y(a);
  const int64_t cx = unpack_x(c) - unpack_x(a), cy = unpack_y(c) - unpack_y(a);
  const int64_t d = 2 * (bx * cy - by * cx);
  const int64_t b2 = bx * bx + by * by, c2 = cx * cx + cy * cy;
  const i128 ux = i128(cy) * b2 - i128(by) * c2, uy = i128(bx) * c2 - i128(cx) * b2;
  const i128 r2 = ux * ux + uy * uy;
  if (check_left) {
    const i128 s = i128(unpack_x(a) - left) * d + ux;
    if (s <= 0 || s * s <= r2) return false;
  }
  if (check_right) {
    const i128 s = i128(right - unpack_x(a)) * d - ux;
    if (s <= 0 || s * s <= r2) return false;
  }
  return true;
}

void circle_x_range(uint32_t a, uint32_t b, uint32_t c, double* lo, double* hi) {
  const double bx = unpack_x(b) - unpack_x(a), by = unpack_y(b) - unpack_y(a);
  const double cx = unpack_x(c) - unpack_x(a), cy = unpack_y(c) - unpack_y(a);
  const double d = 2 * (bx * cy - by * cx);
  const double b2 = bx * bx + by * by, c2 = cx * cx + cy * cy;
  const double ux = (cy * b2 - by * c2) / d, uy = (bx * c2 - cx * b2) / d;
  const double r = std::sqrt(ux * ux + uy * uy);
  *lo = unpack_x(a) + ux - r - 1;  // a pixel of slack for rounding
  *hi = unpack_x(a) + ux + r + 1;
}

void StripDelaunay::run_strip(Strip& s, const std::vector<uint32_t>& points, int x0, int x1, int width, int height,
                              int margin, int side_spacing) {
  s.kept.clear();
  s.retries = 0;
  int left = std::max(0, x0 - margin), right = std::min(width, x1 + margin);
  for (;; ++s.retries) {
    s.local.clear();
    s.left_ys.clear();
    s.right_ys.clear();
    for (uint32_t p : points) {
      const int x = unpack_x(p);
      if (x < left || x > right) continue;
      s.local.push_back(pack_xy(x - left, unpack_y(p)));
      if (x == left) s.left_ys.push_back(unpack_y(p));
      if (x == right) s.right_ys.push_back(unpack_y(p));
    }
    // Artificial points along the cut sides, spaced like the vertices, so no
    // long slivers fan out from the corners into the strip. Every triangle
    // touching a cut side fails the circle test below (its circle reaches the
    // side), so none of them is ever kept.
    const int steps = std::max(1, int(std::lround(double(height) / std::max(1, side_spacing))));
    for (int j = 0; j <= steps; ++j) {
      const int y = int(int64_t(j) * height / steps);
      if (left > 0 && std::find(s.left_ys.begin(), s.left_ys.end(), y) == s.left_ys.end())
        s.local.push_back(pack_xy(0, y));
      if (right < width && std::find(s.right_ys.begin(), s.right_ys.end(), y) == s.right_ys.end())
        s.local.push_back(pack_xy(right - left, y));
    }
    s.delaunay.triangulate(s.local, right - left, height, s.mesh);
    // Failing triangles tell how far their circles reach past the cut sides:
    // the retry widens each side just past the farthest (plus the margin).
    int need_left = left, need_right = right;
    s.kept.clear();
    for (Triangle t : s.mesh) {
      t = {pack_xy(unpack_x(t.a) + left, unpack_y(t.a)), pack_xy(unpack_x(t.b) + left, unpack_y(t.b)),
           pack_xy(unpack_x(t.c) + left, unpack_y(t.c))};
      // Every local triangle reaching into the strip's columns must be
      // certified: then whatever covers an owned centroid is a true triangle,
      // so every true triangle owned here is in this local mesh.
      const int lo = imin3(unpack_x(t.a), unpack_x(t.b), unpack_x(t.c));
      const int hi = imax3(unpack_x(t.a), unpack_x(t.b), unpack_x(t.c));
      if (lo >= x1 || hi < x0) continue;
      if (!circle_within(t.a, t.b, t.c, left, left > 0, right, right < width)) {
        double reach_lo, reach_hi;
        circle_x_range(t.a, t.b, t.c, &reach_lo, &reach_hi);
        need_left = std::min(need_left, int(std::floor(reach_lo)) - margin);
        need_right = std::max(need_right, int(std::ceil(reach_hi)) + margin);
        continue;
      }
      const int sx = unpack_x(t.a) + unpack_x(t.b) + unpack_x(t.c);
      if (sx >= 3 * x0 && sx < 3 * x1) s.kept.push_back(t);  // owned: centroid in [x0, x1)
    }
    need_left = std::max(0, need_left);
    need_right = std::min(width, need_right);
    if (need_left == left && need_right == right) return;  // every triangle certified
    left = need_left;
    right = need_right;
  }
}

bool StripDelaunay::triangulate(const std::vector<uint32_t>& points, int width, int height, int strips,
                                double margin_spacings, std::vector<Triangle>& out) {
  out.clear();
  strips = std::max(1, std::min(strips, width));
  // Boundaries at quantiles of x: strips of about equal point counts.
  column_counts_.assign(size_t(width) + 2, 0);
  for (uint32_t p : points) ++column_counts_[unpack_x(p)];
  bounds_.assign(1, 0);
  int64_t seen = 0;
  for (int x = 0; x <= width; ++x) {
    seen += column_counts_[x];
    const int64_t k = int64_t(bounds_.size());
    if (k < strips && seen * strips >= k * int64_t(points.size()) && x + 1 > bounds_.back()) bounds_.push_back(x + 1);
  }
  bounds_.push_back(width + 1);
  const int count = int(bounds_.size()) - 1;
  strips_.resize(size_t(count));
  parallel_for(count, [&](int k0, int k1) {
    for (int k = k0; k < k1; ++k) {
      const int x0 = bounds_[k], x1 = bounds_[k + 1];
      int64_t inside = 0;
      for (int x = x0; x < x1 && x <= width; ++x) inside += column_counts_[x];
      const double spacing = std::sqrt(double(height) * (x1 - x0) / double(std::max<int64_t>(1, inside)));
      run_strip(strips_[k], points, x0, x1, width, height, std::max(1, int(std::lround(margin_spacings * spacing))),
                int(std::lround(spacing)));
    }
  });
  retries_ = 0;
  for (const Strip& s : strips_) {
    out.insert(out.end(), s.kept.begin(), s.kept.end());
    retries_ += s.retries;
  }
  int hull = 0;
  for (uint32_t p : points)
    hull += unpack_x(p) == 0 || unpack_x(p) == width || unpack_y(p) == 0 || unpack_y(p) == height;
  if (out.size() == size_t(2 * points.size() - 2 - hull)) return true;
  out.clear();
  return false;
}

}  // namespace sp::lowpoly
