// Reading the CUDA backend back: counters (never waiting) and, for tests, the
// last frame's mesh, Voronoi labels and square statistics.
#include "pipeline/cuda_check.h"
#include "stages/lowpoly/lowpoly_cuda_state.h"

namespace sp::lowpoly {

StageCounters LowpolyStage::counters() const {
  if (backend_ == Backend::cpu || !cuda_) return cpu_counters_;
  CudaState& c = *cuda_;
  // Phase times of the last frame whose events completed; never waits.
  if (c.recorded && cudaEventQuery(c.marks[kDone]) == cudaSuccess) {
    // check_ms (the host's check of the mesh, on its own stream) overlaps shading_ms.
    const struct {
      const char* name;
      CudaMark from, to;
    } spans[] = {{"edges_ms", kStart, kEdges}, {"points_ms", kEdges, kPoints}, {"grid_ms", kPoints, kGrid},
                 {"star_ms", kGrid, kStar},    {"emit_ms", kStar, kEmit},     {"mesh_ms", kPoints, kEmit},
                 {"shading_ms", kEmit, kShaded}, {"check_ms", kEmit, kHostChecked}, {"join_ms", kShaded, kDone}};
    for (const auto& span : spans) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, c.marks[span.from], c.marks[span.to]) == cudaSuccess) c.cached[span.name] = ms;
    }
    c.cached["points"] = c.points;
    c.cached["triangles"] = c.triangles;
    c.cached["points_dropped"] = c.dropped;
    c.cached["mesh_fallbacks"] = double(c.fallbacks.load());
    c.cached["fallback_host_ms"] = c.host_ms;
    c.cached["long_rings"] = c.long_rings;
    c.cached["in_circle_tests"] = c.tests;
    c.cached["lanes_per_vertex"] = c.gpu_mesh.lanes_per_vertex();
    if (settings_.voronoi_check && cudaEventQuery(c.voronoi_marks[4]) == cudaSuccess) {
      const char* vnames[3] = {"jfa_ms", "squares_ms", "square_compare_ms"};
      for (int i = 0; i < 3; ++i) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, c.voronoi_marks[i], c.voronoi_marks[i + 1]) == cudaSuccess) c.cached[vnames[i]] = ms;
      }
      const SquareStats q = *c.h_square_stats;
      c.cached["square_triangles"] = q.triangles;
      c.cached["square_not_ccw"] = q.not_ccw;
      c.cached["square_delaunay"] = q.delaunay;
      c.cached["square_distinct_delaunay"] = q.distinct_delaunay;
      c.cached["square_missing"] = q.missing;
      c.cached["square_overflow"] = q.overflow;
    }
    if (settings_.mesh == MeshRoute::squares) {
      // star_ms is the whole ring construction here: JFA + squares + certification + repair.
      const char* snames[4] = {"jfa_ms", "squares_ms", "certify_ms", "repair_ms"};
      const cudaEvent_t ends[5] = {c.marks[kGrid], c.squares_marks[0], c.squares_marks[1], c.squares_marks[2],
                                   c.marks[kStar]};
      for (int i = 0; i < 4; ++i) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, ends[i], ends[i + 1]) == cudaSuccess) c.cached[snames[i]] = ms;
      }
      std::lock_guard lock(c.repair_mutex);
      add_repair_counters(c.repair_stats, c.cached);
    }
  }
  return c.cached;
}

const std::vector<Triangle>& LowpolyStage::mesh() const {
  if (backend_ != Backend::cuda || !cuda_) return mesh_.triangles();
  // Test and debugging accessor: copies the device's mesh (the caller synchronized the stream).
  int count = 0;
  SP_CUDA_CHECK(cudaMemcpy(&count, cuda_->tri_count, sizeof(int), cudaMemcpyDeviceToHost));
  cuda_->device_mesh.resize(size_t(count));
  SP_CUDA_CHECK(cudaMemcpy(cuda_->device_mesh.data(), cuda_->tris, size_t(count) * sizeof(Triangle),
                           cudaMemcpyDeviceToHost));
  return cuda_->device_mesh;
}

std::vector<int32_t> LowpolyStage::voronoi_labels() const {
  if (backend_ != Backend::cuda || !cuda_) return cpu_labels_;
  return cuda_->voronoi.read_labels();
}

SquareStats LowpolyStage::square_stats() const {
  if (backend_ != Backend::cuda || !cuda_) return cpu_square_stats_;
  SquareStats s;
  SP_CUDA_CHECK(cudaMemcpy(&s, cuda_->square_stats, sizeof(SquareStats), cudaMemcpyDeviceToHost));
  return s;
}

int64_t LowpolyStage::mesh_fallbacks() const { return cuda_ ? cuda_->fallbacks.load() : mesh_.squares_fallbacks(); }

}  // namespace sp::lowpoly
