#pragma once
// Test oracles for the lowpoly mesh, written from the definitions with their
// own 128-bit arithmetic (not lowpoly_math.h's), plus point-set generators.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "stages/lowpoly/lowpoly_delaunay.h"

namespace sp::lowpoly::oracle {

using i128 = __int128;
inline int px(uint32_t p) { return int(p & 0xFFFF); }
inline int py(uint32_t p) { return int(p >> 16); }

inline i128 orient128(uint32_t a, uint32_t b, uint32_t c) {
  return i128(px(b) - px(a)) * (py(c) - py(a)) - i128(py(b) - py(a)) * (px(c) - px(a));
}

// Determinant of [x - dx, y - dy, (x - dx)^2 + (y - dy)^2] rows for a, b, c: > 0 when d is inside.
inline i128 incircle128(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  const i128 m[3][3] = {
      {px(a) - px(d), py(a) - py(d), 0}, {px(b) - px(d), py(b) - py(d), 0}, {px(c) - px(d), py(c) - py(d), 0}};
  i128 r[3][3];
  for (int i = 0; i < 3; ++i) r[i][0] = m[i][0], r[i][1] = m[i][1], r[i][2] = m[i][0] * m[i][0] + m[i][1] * m[i][1];
  return r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
         r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
}

inline bool on_rectangle(uint32_t p, int w, int h) { return px(p) == 0 || px(p) == w || py(p) == 0 || py(p) == h; }

// Border points every `spacing` (corners included) plus n distinct random interior lattice points.
inline std::vector<uint32_t> random_points(int w, int h, int n, int spacing, std::mt19937_64& rng) {
  std::set<uint32_t> s;
  for (int x = 0; x <= w; x += spacing) s.insert(pack_xy(x, 0)), s.insert(pack_xy(x, h));
  for (int y = 0; y <= h; y += spacing) s.insert(pack_xy(0, y)), s.insert(pack_xy(w, y));
  s.insert(pack_xy(w, 0)), s.insert(pack_xy(w, h)), s.insert(pack_xy(0, h));
  const int64_t room = int64_t(w - 1) * (h - 1);
  for (int k = 0; k < n && k < room; ++k)
    while (!s.insert(pack_xy(1 + int(rng() % uint64_t(w - 1)), 1 + int(rng() % uint64_t(h - 1)))).second) {
    }
  return {s.begin(), s.end()};
}

// The random point sets the route tests share: 40 frames from 1x1 to 300x200,
// up to 800 points, and every third a grid cell far too small or too large
// (cell 0: the route's own choice). Calls check(points, w, h, cell, what).
template <class Check>
void for_random_point_sets(std::mt19937_64& rng, Check check) {
  for (int trial = 0; trial < 40; ++trial) {
    const int w = 1 + int(rng() % 300), h = 1 + int(rng() % 200);
    const int n = int(rng() % 800), spacing = int(1 + rng() % 40);
    const std::vector<uint32_t> pts = random_points(w, h, n, spacing, rng);
    const int cell = trial % 3 == 0 ? int(1 + rng() % 60) : 0;
    check(pts, w, h, cell,
          std::to_string(w) + "x" + std::to_string(h) + " n=" + std::to_string(n) + " cell=" + std::to_string(cell));
  }
}

inline std::vector<uint32_t> grid_points(int w, int h, int step) {
  auto axis = [step](int n) {
    std::vector<int> v;
    for (int i = 0; i < n; i += step) v.push_back(i);
    v.push_back(n);
    return v;
  };
  std::vector<uint32_t> pts;
  for (int y : axis(h))
    for (int x : axis(w)) pts.push_back(pack_xy(x, y));
  return pts;
}

// Triangles as vertex triples rotated to start at their smallest vertex, sorted.
inline std::vector<std::array<uint32_t, 3>> canonical(const std::vector<Triangle>& tris) {
  std::vector<std::array<uint32_t, 3>> out;
  for (const Triangle& t : tris) {
    std::array<uint32_t, 3> v = {t.a, t.b, t.c};
    std::rotate(v.begin(), std::min_element(v.begin(), v.end()), v.end());
    out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether the triangle owns pixel sample (x, y) nudged by (+eps, +eps^2).
inline bool nudged_inside(const Triangle& t, int x, int y) {
  const uint32_t v[3] = {t.a, t.b, t.c};
  const uint32_t p = pack_xy(x, y);
  for (int i = 0; i < 3; ++i) {
    const uint32_t a = v[i], b = v[(i + 1) % 3];
    const i128 e = orient128(a, b, p);
    const int dx = px(b) - px(a), dy = py(b) - py(a);
    const i128 nudged = e != 0 ? e : dy != 0 ? -dy : dx;
    if (nudged <= 0) return false;
  }
  return true;
}

inline void expect_valid_delaunay(const std::vector<uint32_t>& pts, const std::vector<Triangle>& tris, int w, int h) {
  const std::set<uint32_t> point_set(pts.begin(), pts.end());
  int hull = 0;
  for (uint32_t p : pts) hull += on_rectangle(p, w, h);
  const int n = int(pts.size());
  ASSERT_EQ(int(tris.size()), 2 * n - 2 - hull) << "n=" << n << " h=" << hull;
  i128 area2 = 0;
  std::set<uint32_t> used;
  std::map<std::pair<uint32_t, uint32_t>, int> edges;
  for (const Triangle& t : tris) {
    const uint32_t v[3] = {t.a, t.b, t.c};
    const i128 o = orient128(t.a, t.b, t.c);
    ASSERT_GT(o, 0) << "degenerate or clockwise triangle";
    area2 += o;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(point_set.count(v[i])) << "vertex not in the input";
      used.insert(v[i]);
      ASSERT_EQ(++edges[std::make_pair(v[i], v[(i + 1) % 3])], 1) << "directed edge used twice: overlap";
    }
  }
  EXPECT_EQ(used.size(), point_set.size()) << "a point is not a vertex";
  EXPECT_TRUE(area2 == i128(2) * w * h) << "areas do not sum to the hull area";
  for (const auto& [e, count] : edges) {
    if (edges.count({e.second, e.first})) continue;
    EXPECT_TRUE(on_rectangle(e.first, w, h) && on_rectangle(e.second, w, h) &&
                (px(e.first) == px(e.second) || py(e.first) == py(e.second)))
        << "boundary edge inside the frame: a hole";
  }
  // Every pixel in exactly one triangle.
  std::vector<int> cover(size_t(w) * h, 0);
  for (const Triangle& t : tris) {
    const int x0 = std::min({px(t.a), px(t.b), px(t.c)}), x1 = std::min(w - 1, std::max({px(t.a), px(t.b), px(t.c)}));
    const int y0 = std::min({py(t.a), py(t.b), py(t.c)}), y1 = std::min(h - 1, std::max({py(t.a), py(t.b), py(t.c)}));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) cover[size_t(y) * w + x] += nudged_inside(t, x, y);
  }
  int wrong = 0;
  for (int c : cover) wrong += c != 1;
  EXPECT_EQ(wrong, 0) << "pixels not covered exactly once";
  // Empty circumcircles; co-circular points must lose the tie-break.
  int inside = 0, tie_broken_wrong = 0;
  for (const Triangle& t : tris)
    for (uint32_t p : pts) {
      if (p == t.a || p == t.b || p == t.c) continue;
      const i128 s = incircle128(t.a, t.b, t.c, p);
      inside += s > 0;
      if (s == 0) tie_broken_wrong += incircle_perturbed(t.a, t.b, t.c, p) > 0;
    }
  EXPECT_EQ(inside, 0) << "points inside circumcircles";
  EXPECT_EQ(tie_broken_wrong, 0) << "co-circular points resolved against the tie-break";
}

}  // namespace sp::lowpoly::oracle
