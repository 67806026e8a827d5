#include "stages/lowpoly/lowpoly_star_mesh.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <unordered_map>

#include "pipeline/parallel.h"

namespace sp::lowpoly {

int star_cell_size(int width, int height, int64_t vertices) {
  const double area = double(width) * height;
  return std::max(1, int(std::lround(std::sqrt(area / double(std::max<int64_t>(vertices, 1))))));
}

std::vector<uint32_t> border_ring(const std::vector<uint32_t>& points, int width, int height) {
  std::vector<uint32_t> ring;
  for (uint32_t p : points)
    if (unpack_x(p) == 0 || unpack_x(p) == width || unpack_y(p) == 0 || unpack_y(p) == height) ring.push_back(p);
  std::sort(ring.begin(), ring.end(), [&](uint32_t a, uint32_t b) {
    return perimeter_key(a, width, height) < perimeter_key(b, width, height);
  });
  return ring;
}

VertexGrid HostVertexGrid::build(const std::vector<uint32_t>& points, int width, int height, int cell) {
  VertexGrid g;
  g.cell = cell > 0 ? cell : star_cell_size(width, height, int64_t(points.size()));
  g.cols = grid_cols(width, g.cell), g.rows = grid_cols(height, g.cell);
  g.width = width, g.height = height;
  start.assign(size_t(g.cols) * g.rows + 1, 0);
  for (uint32_t p : points) ++start[size_t(cell_index(g, p)) + 1];
  for (size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
  sorted.resize(points.size());
  std::vector<int32_t> cursor(start.begin(), start.end() - 1);
  for (uint32_t p : points) sorted[size_t(cursor[size_t(cell_index(g, p))]++)] = p;
  g.points = sorted.data(), g.start = start.data();
  return g;
}

bool StarMesh::triangulate(const std::vector<uint32_t>& points, int width, int height, std::vector<Triangle>& out,
                           int cell) {
  out.clear();
  tests_ = 0;
  for (uint32_t p : points)
    if (unpack_x(p) > width || unpack_y(p) > height) return false;
  const VertexGrid g = grid_.build(points, width, height, cell);

  const std::vector<uint32_t> ring = border_ring(points, width, height);
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> ends;  // border vertex -> (next, previous)
  const size_t b = ring.size();
  for (size_t i = 0; i < b; ++i) ends[ring[i]] = {ring[(i + 1) % b], ring[(i + b - 1) % b]};
  if (b < 3) return false;

  std::vector<std::vector<Triangle>> per_point(points.size());
  std::atomic<bool> ok{true};
  std::atomic<int64_t> tests{0}, max_tests{0};
  parallel_for(int(points.size()), [&](int i0, int i1) {
    int local_tests = 0;
    for (int i = i0; i < i1; ++i) {
      const uint32_t p = points[size_t(i)];
      const int before = local_tests;
      const auto it = ends.find(p);
      const uint32_t first = it != ends.end() ? it->second.first : nearest_vertex(g, p, kStarRadius);
      const uint32_t last = it != ends.end() ? it->second.second : kNoVertex;
      std::vector<Triangle>& mine = per_point[size_t(i)];
      const int n = walk_star(g, p, first, last, kMaxRing, kStarRadius, &local_tests, [&](uint32_t q, uint32_t r) {
        if (owns_triangle(p, q, r)) mine.push_back({p, q, r});
      });
      if (n < 0) ok = false;
      int64_t seen = max_tests.load();
      while (local_tests - before > seen && !max_tests.compare_exchange_weak(seen, local_tests - before)) {
      }
    }
    tests += local_tests;
  }, 64);
  tests_ = tests, max_tests_ = max_tests;
  if (!ok) return false;
  for (const auto& v : per_point) out.insert(out.end(), v.begin(), v.end());
  return true;
}

}  // namespace sp::lowpoly
