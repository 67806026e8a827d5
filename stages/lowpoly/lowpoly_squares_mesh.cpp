#include "stages/lowpoly/lowpoly_squares_mesh.h"

#include <atomic>
#include <random>
#include <unordered_map>

#include "pipeline/parallel.h"
#include "stages/lowpoly/lowpoly_voronoi.h"

namespace sp::lowpoly {

bool SquaresMesh::triangulate(const std::vector<uint32_t>& points, int width, int height, std::vector<Triangle>& out,
                              int cell) {
  out.clear();
  stats_ = RepairStats{};
  for (uint32_t p : points)
    if (unpack_x(p) > width || unpack_y(p) > height) return false;
  const std::vector<uint32_t> ring = border_ring(points, width, height);
  if (ring.size() < 3) return false;
  const VertexGrid g = grid_.build(points, width, height, cell);
  jfa_cpu(points, width, height, JfaVariant::one_plus_plus_two, labels_);
  square_triangles_cpu(labels_, width, height, square_tris_);

  // Keep: judge every square triangle (independent, in parallel).
  const int squares = int(square_tris_.size() / 3);
  stats_.square_triangles = squares;
  verdicts_.assign(size_t(squares), 0);
  parallel_for(squares, [&](int t0, int t1) {
    int tests = 0;
    for (int t = t0; t < t1; ++t) {
      const int32_t* v = &square_tris_[3 * size_t(t)];
      verdicts_[size_t(t)] = uint8_t(judge_square_triangle(g, points[size_t(v[0])], points[size_t(v[1])],
                                                           points[size_t(v[2])], &tests));
    }
  }, 256);
  // Known link edges per vertex (compressed rows): kept (a, b, c) gives a: b -> c, b: c -> a, c: a -> b.
  known_start_.assign(points.size() + 1, 0);
  for (int t = 0; t < squares; ++t) {
    const auto verdict = SquareVerdict(verdicts_[size_t(t)]);
    stats_.flipped += verdict == SquareVerdict::flipped;
    stats_.not_delaunay += verdict == SquareVerdict::not_delaunay;
    if (verdict != SquareVerdict::kept) continue;
    ++stats_.certified;
    for (int k = 0; k < 3; ++k) ++known_start_[size_t(square_tris_[3 * size_t(t) + k]) + 1];
  }
  for (size_t i = 1; i < known_start_.size(); ++i) known_start_[i] += known_start_[i - 1];
  known_q_.resize(size_t(known_start_.back())), known_r_.resize(known_q_.size());
  std::vector<int32_t> cursor(known_start_.begin(), known_start_.end() - 1);
  for (int t = 0; t < squares; ++t) {
    if (SquareVerdict(verdicts_[size_t(t)]) != SquareVerdict::kept) continue;
    const int32_t* v = &square_tris_[3 * size_t(t)];
    for (int k = 0; k < 3; ++k) {
      const int32_t owner = cursor[size_t(v[k])]++;
      known_q_[size_t(owner)] = points[size_t(v[(k + 1) % 3])];
      known_r_[size_t(owner)] = points[size_t(v[(k + 2) % 3])];
    }
  }

  if (shuffle_seed_ != 0) {
    std::mt19937_64 rng(shuffle_seed_);
    for (size_t i = 0; i + 1 < known_start_.size(); ++i)
      for (int32_t k = known_start_[i + 1] - 1; k > known_start_[i]; --k) {
        const int32_t j = known_start_[i] + int32_t(rng() % uint64_t(k - known_start_[i] + 1));
        std::swap(known_q_[size_t(k)], known_q_[size_t(j)]);
        std::swap(known_r_[size_t(k)], known_r_[size_t(j)]);
      }
  }

  // Repair, in the GPU's two phases: every vertex first tries to close its
  // ring from known edges alone; only the open ones walk with searches.
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> ends;  // border vertex -> (next, previous)
  const size_t b = ring.size();
  for (size_t i = 0; i < b; ++i) ends[ring[i]] = {ring[(i + 1) % b], ring[(i + b - 1) % b]};
  std::vector<std::vector<Triangle>> per_point(points.size());
  std::vector<RingRepairCounts> counts(points.size());
  std::atomic<bool> ok{true};
  std::atomic<int> overflow{0};
  parallel_for(int(points.size()), [&](int i0, int i1) {
    int tests = 0;
    for (int i = i0; i < i1; ++i) {
      const uint32_t p = points[size_t(i)];
      const uint32_t* kq = known_q_.data() + known_start_[size_t(i)];
      const uint32_t* kr = known_r_.data() + known_start_[size_t(i)];
      const int filed = known_start_[size_t(i) + 1] - known_start_[size_t(i)];
      const int known = known_slots_ > 0 && filed > known_slots_ ? known_slots_ : filed;
      if (known < filed) overflow += filed - known;
      const auto it = ends.find(p);
      const bool border = it != ends.end();
      const uint32_t last = border ? it->second.second : kNoVertex;
      uint32_t first = ring_start(border, border ? it->second.first : kNoVertex, kq, known);
      std::vector<Triangle>& mine = per_point[size_t(i)];
      auto emit = [&](uint32_t q, uint32_t r) {
        if (owns_triangle(p, q, r)) mine.push_back({p, q, r});
      };
      RingRepairCounts closing;
      if (close_ring_from_known(p, first, last, kMaxRing, kq, kr, known, &closing, emit) >= 0) {
        counts[size_t(i)] = closing;
        continue;
      }
      mine.clear();  // open: walk again, searching the gaps
      if (first == kNoVertex) first = nearest_vertex(g, p, kStarRadius);
      const int steps = repair_ring(p, first, last, kMaxRing, kq, kr, known, &counts[size_t(i)],
                                    [&](uint32_t q) { return third_vertex(g, p, q, kStarRadius, &tests); }, emit);
      if (steps < 0) ok = false;
    }
  }, 64);
  stats_.known_overflow = overflow;
  for (const RingRepairCounts& c : counts) {
    stats_.kept += c.owned_known;
    stats_.repaired_triangles += c.owned_searched;
    stats_.repaired_vertices += c.searches > 0;
    stats_.repair_searches += c.searches;
  }
  for (const auto& v : per_point) out.insert(out.end(), v.begin(), v.end());
  return ok && out.size() == 2 * points.size() - 2 - b;
}

}  // namespace sp::lowpoly
