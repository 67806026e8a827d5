#include "stages/lowpoly/lowpoly_voronoi.h"

#include <algorithm>
#include <array>
#include <set>

#include "pipeline/parallel.h"

namespace sp::lowpoly {

std::vector<int> jfa_steps(int w1, int h1, JfaVariant variant) {
  int n = 1;
  while (n < std::max(w1, h1)) n *= 2;
  std::vector<int> steps;
  if (variant == JfaVariant::one_plus || variant == JfaVariant::one_plus_plus_two) steps.push_back(1);
  for (int s = n / 2; s >= 1; s /= 2) steps.push_back(s);
  if (variant == JfaVariant::plus_two || variant == JfaVariant::one_plus_plus_two) steps.push_back(2), steps.push_back(1);
  return steps;
}

void jfa_cpu(const std::vector<uint32_t>& sites, int width, int height, JfaVariant variant,
             std::vector<int32_t>& labels) {
  const int w1 = width + 1, h1 = height + 1;
  labels.assign(size_t(w1) * h1, kNoSite);
  for (size_t i = 0; i < sites.size(); ++i)
    labels[size_t(unpack_y(sites[i])) * w1 + unpack_x(sites[i])] = int32_t(i);
  std::vector<int32_t> next(labels.size());
  for (int step : jfa_steps(w1, h1, variant)) {
    parallel_for(h1, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y)
        for (int x = 0; x < w1; ++x) next[size_t(y) * w1 + x] = jfa_pick(labels.data(), sites.data(), w1, h1, x, y, step);
    }, 16);
    labels.swap(next);
  }
}

void square_triangles_cpu(const std::vector<int32_t>& labels, int width, int height, std::vector<int32_t>& tris) {
  tris.clear();
  int32_t t[6];
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int n = square_triangles(labels.data(), width + 1, x, y, t);
      tris.insert(tris.end(), t, t + 3 * n);
    }
}

SquareStats compare_with_mesh(const std::vector<uint32_t>& sites, const std::vector<int32_t>& square_tris,
                              const std::vector<Triangle>& mesh) {
  auto key = [](uint32_t a, uint32_t b, uint32_t c) {  // rotated to start at the smallest vertex
    if (b < a && b < c) return std::array<uint32_t, 3>{b, c, a};
    if (c < a && c < b) return std::array<uint32_t, 3>{c, a, b};
    return std::array<uint32_t, 3>{a, b, c};
  };
  std::set<std::array<uint32_t, 3>> exact, found;
  for (const Triangle& t : mesh) exact.insert(key(t.a, t.b, t.c));
  SquareStats s;
  s.triangles = int(square_tris.size() / 3);
  for (size_t i = 0; i + 2 < square_tris.size(); i += 3) {
    const uint32_t a = sites[size_t(square_tris[i])], b = sites[size_t(square_tris[i + 1])],
                   c = sites[size_t(square_tris[i + 2])];
    if (orient(unpack_x(a), unpack_y(a), unpack_x(b), unpack_y(b), unpack_x(c), unpack_y(c)) <= 0) {
      ++s.not_ccw;
      continue;
    }
    const auto k = key(a, b, c);
    if (exact.count(k)) ++s.delaunay, found.insert(k);
  }
  s.distinct_delaunay = int(found.size());
  s.missing = int(exact.size() - found.size());
  return s;
}

}  // namespace sp::lowpoly
