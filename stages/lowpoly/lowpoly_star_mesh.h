#pragma once
// The star construction (lowpoly_star.h) on the host: the GPU mesh's
// algorithm run by the CPU, so the tests can hold it against the incremental
// triangulation and CGAL without a GPU; also the layout both share.
#include <cstdint>
#include <vector>

#include "stages/lowpoly/lowpoly_star.h"

namespace sp::lowpoly {

// Grid cell side for n vertices in a W x H frame: about one vertex per cell.
int star_cell_size(int width, int height, int64_t vertices);
// Initial search radius in cells around a vertex (3x3 cells for radius 1).
constexpr int kStarRadius = 1;
// A ring longer than this is a bug guard (a vertex has at most n - 1 neighbours).
constexpr int kMaxRing = 1 << 20;

// The points on the frame border sorted counter-clockwise (perimeter_key).
std::vector<uint32_t> border_ring(const std::vector<uint32_t>& points, int width, int height);

// Vertices bucketed by grid cell on the host (a counting sort), as the GPU does.
struct HostVertexGrid {
  std::vector<uint32_t> sorted;
  std::vector<int32_t> start;
  // `cell` 0: star_cell_size. The returned view points into this object.
  VertexGrid build(const std::vector<uint32_t>& points, int width, int height, int cell);
};

class StarMesh {
 public:
  // Same contract and result as Delaunay::triangulate (the unique perturbed
  // Delaunay triangulation), triangles grouped by their smallest vertex.
  // Returns false when a walk failed (never on valid input).
  bool triangulate(const std::vector<uint32_t>& points, int width, int height, std::vector<Triangle>& out,
                   int cell = 0);
  // In-circle tests of the last call (statistics).
  int64_t tests() const { return tests_; }
  int64_t max_vertex_tests() const { return max_tests_; }

 private:
  HostVertexGrid grid_;
  int64_t tests_ = 0, max_tests_ = 0;
};

}  // namespace sp::lowpoly
