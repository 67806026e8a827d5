#include <chrono>

#include "pipeline/errors.h"
#include "pipeline/parallel.h"
#include "stages/lowpoly/lowpoly.h"
#include "stages/lowpoly/lowpoly_star_mesh.h"

namespace sp::lowpoly {

void MeshBuilder::build(const FramePlan& plan, const int32_t* selected, int count) {
  const auto t0 = std::chrono::steady_clock::now();
  // Points past the capacity (8 sigma above the expected count) are dropped,
  // the same ones on both backends.
  dropped_ = count > plan.capacity ? count - plan.capacity : 0;
  if (count > plan.capacity) count = plan.capacity;
  points_.assign(plan.border.begin(), plan.border.end());
  for (int k = 0; k < count; ++k)
    points_.push_back(pack_xy(selected[k] % plan.width, selected[k] / plan.width));
  // The triangulation is unique for a point set: same points, same mesh.
  reused_ = points_ == previous_ && !triangles_.empty();
  if (!reused_ && squares_on_) {
    // The GPU's vertex order (border ring, then interior): the same JFA labels.
    std::vector<uint32_t> sites = border_ring(plan.border, plan.width, plan.height);
    sites.insert(sites.end(), points_.begin() + ptrdiff_t(plan.border.size()), points_.end());
    if (squares_.triangulate(sites, plan.width, plan.height, triangles_) && !force_squares_failure_) {
      previous_ = points_;
      fell_back_ = false;
      build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return;
    }
    ++squares_fallbacks_;
  }
  if (!reused_) {
    // One strip per worker (equal point counts), each about 8 vertex
    // spacings wide or more; margins of 3.5 spacings (3 left a retry in most
    // frames, and a retrying strip doubles the critical path).
    const int strips = std::min(worker_count(), plan.width / (8 * plan.mean_spacing));
    const bool parallel = strips > 1 && strips_.triangulate(points_, plan.width, plan.height, strips, 3.5, triangles_);
    fell_back_ = strips > 1 && !parallel;
    if (!parallel && !delaunay_.triangulate(points_, plan.width, plan.height, triangles_))
      throw Error(ExitCode::internal, "stage 'lowpoly': triangulation input violates its contract");
    previous_ = points_;
  }
  build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace sp::lowpoly
