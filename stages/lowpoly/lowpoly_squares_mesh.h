#pragma once
// The `mesh: squares` route on the host: the construction (digital
// Voronoi diagram by 1+JFA+2, triangles of the 2x2 squares, then the repair of
// lowpoly_repair.h), ending in the same exact triangulation as the star and
// incremental constructions. The CPU backend runs it for `mesh: squares`, and
// the tests hold the GPU's algorithm against the other constructions with it.
#include <cstdint>
#include <vector>

#include "stages/lowpoly/lowpoly_repair.h"
#include "stages/lowpoly/lowpoly_star_mesh.h"

namespace sp::lowpoly {

class SquaresMesh {
 public:
  // Same contract and result as StarMesh::triangulate; `points` in any order
  // (labels() index into it). Returns false when a walk failed or the count is
  // not 2n - 2 - h (never on valid input).
  bool triangulate(const std::vector<uint32_t>& points, int width, int height, std::vector<Triangle>& out,
                   int cell = 0);
  const RepairStats& stats() const { return stats_; }
  // Known link edges kept per vertex, in square order (0: all). The default
  // mirrors the GPU's slots; tests lower it to exercise the overflow.
  void set_known_slots(int slots) { known_slots_ = slots; }
  // Test hook: file each vertex's known edges in a random order (seed != 0),
  // as the GPU's atomics may: which edge starts a ring and which overflow vary.
  void shuffle_known_for_testing(uint64_t seed) { shuffle_seed_ = seed; }
  // The JFA labels of the last call ((W+1) x (H+1) indices into `points`).
  const std::vector<int32_t>& labels() const { return labels_; }

 private:
  HostVertexGrid grid_;
  std::vector<int32_t> labels_, square_tris_;
  std::vector<uint8_t> verdicts_;
  std::vector<int32_t> known_start_;
  std::vector<uint32_t> known_q_, known_r_;
  RepairStats stats_;
  int known_slots_ = kKnownSlots;
  uint64_t shuffle_seed_ = 0;
};

}  // namespace sp::lowpoly
