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

void StripDelaunay::run_strip(Strip& s, const std::vector<uint32_t>& points, int x0, int x1, int width, int height,
                              int margin) {
  s.kept.clear();
  s.retries = 0;
  for (;; margin *= 2, ++s.retries) {
    const int left = std::max(0, x0 - margin), right = std::min(width, x1 + margin);
    s.local.clear();
    for (uint32_t p : points)
      if (unpack_x(p) >= left && unpack_x(p) <= right) s.local.push_back(pack_xy(unpack_x(p) - left, unpack_y(p)));
    uint32_t added[4];
    int added_count = 0;
    for (uint32_t corner : {pack_xy(0, 0), pack_xy(right - left, 0), pack_xy(0, height), pack_xy(right - left, height)})
      if (std::find(s.local.begin(), s.local.end(), corner) == s.local.end()) {
        s.local.push_back(corner);
        added[added_count++] = pack_xy(unpack_x(corner) + left, unpack_y(corner));
      }
    s.delaunay.triangulate(s.local, right - left, height, s.mesh);
    bool complete = true;
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
      bool fake = false;
      for (int i = 0; i < added_count; ++i) fake |= t.a == added[i] || t.b == added[i] || t.c == added[i];
      if (fake || !circle_within(t.a, t.b, t.c, left, left > 0, right, right < width)) {
        complete = false;
        break;
      }
      const int sx = unpack_x(t.a) + unpack_x(t.b) + unpack_x(t.c);
      if (sx >= 3 * x0 && sx < 3 * x1) s.kept.push_back(t);  // owned: centroid in [x0, x1)
    }
    if (complete || (left == 0 && right == width)) return;
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
      run_strip(strips_[k], points, x0, x1, width, height, std::max(1, int(std::lround(margin_spacings * spacing))));
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
