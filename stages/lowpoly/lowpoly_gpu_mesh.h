#pragma once
// The Delaunay mesh built on the GPU by the star construction
// (lowpoly_star.h): vertices -> uniform grid (count, CUB scan, scatter) ->
// one thread per vertex walks its ring -> CUB scan of the triangle counts ->
// triangles written in place. Nothing goes to the host; the result is
// certified on the device (every walk ended, 2n - 2 - h triangles) and the
// status says whether the host must step in (lowpoly_cuda.cu).
#include <cuda_runtime.h>

#include <cstdint>

#include "pipeline/scratch.h"
#include "stages/lowpoly/lowpoly_math.h"
#include "stages/lowpoly/lowpoly_repair.h"

namespace sp::lowpoly {

struct FramePlan;

// Device-side result of one build (copied to pinned memory for the counters).
struct GpuMeshStatus {
  int points = 0;        // n: border + kept interior vertices
  int dropped = 0;       // interior vertices over the capacity
  int triangles = 0;     // written
  int expected = 0;      // 2n - 2 - h
  int failed = 0;        // bits: 1 a walk failed, 2 wrong count, 4 triangle buffer overflow, 8 forced (test)
  int long_rings = 0;    // rings longer than the stored slots (walked twice)
  unsigned long long in_circle_tests = 0;
  RepairStats repair;    // mesh: squares only
};

// Enum of the phase marks recorded inside build() (CUDA events, optional).
enum class GpuMeshMark { grid, star, emit, count };

// The device mesh's per-vertex rings, for the Voronoi diagnostic (lowpoly_voronoi.cu).
struct RingView {
  const uint32_t* points;       // vertex array (border ring, then interior)
  const uint32_t* first;        // ring start per vertex
  const uint32_t* ring;         // kRingSlots third vertices per vertex
  const int32_t* ring_length;   // triangles around each vertex
  const GpuMeshStatus* status;  // points = n, expected = 2n - 2 - h
  int max_vertices;
};

// The device arrays a ring construction fills (the star kernels here, the
// squares repair in lowpoly_gpu_repair.cu); emit() turns them into triangles.
struct MeshWorkspace {
  VertexGrid grid;
  const uint32_t* points;  // border ring, then interior
  const uint32_t* border;  // the border ring
  int border_count, max_vertices;
  uint32_t* first;         // ring start per vertex
  uint32_t* ring;          // kRingSlots third vertices per vertex
  int32_t* ring_length;    // ring steps (-1: the walk failed)
  int32_t* owned;          // triangles the vertex emits (it is their smallest vertex)
};

class GpuMesh {
 public:
  // Allocates everything for the plan's frame size and uploads the border ring.
  void configure(const FramePlan& plan, ScratchAllocator& scratch);
  // `selected`: interior vertices as pixel indices (raster order), `num_selected` of them (device).
  // Writes at most plan.max_triangles() triangles and their count; marks[i] (if not null) is recorded
  // after each phase.
  void build(const int32_t* selected, const int* num_selected, Triangle* tris, int* tri_count, GpuMeshStatus* status,
             cudaStream_t stream, cudaEvent_t const* marks = nullptr, bool force_fail = false);

  // build() in its three phases, for the squares route (which replaces walk_stars()):
  // vertices + grid, the star walks, then scan + triangles + certification.
  void build_grid(const int32_t* selected, const int* num_selected, GpuMeshStatus* status, cudaStream_t stream);
  void walk_stars(GpuMeshStatus* status, cudaStream_t stream);
  void emit(Triangle* tris, int* tri_count, GpuMeshStatus* status, cudaStream_t stream, bool force_fail);
  MeshWorkspace workspace() const;

  RingView rings(const GpuMeshStatus* status) const {
    return {points_, first_, ring_, ring_length_, status, border_ + capacity_};
  }

  // Lanes per vertex in the star kernel: 32 (a warp), 16, 8, 4, or 1 (the
  // thread kernel). configure() picks 8 while the vertices number at most 128
  // per SM (1080p on an H100), 4 beyond. Measured on the H100 (star phase, ms,
  // 32/16/8/4/1 lanes): 10.7k vertices 0.195/0.150/0.104/0.118/0.656, 25k
  // 0.415/0.291/0.207/0.185/0.779, 42k 0.670/0.469/0.314/0.237/0.882. A whole
  // warp spends five shuffle rounds per search on boxes of a few dozen
  // candidates; one thread alone waits on every load of its searches.
  void set_lanes_per_vertex(int lanes) { lanes_per_vertex_ = lanes; }
  int lanes_per_vertex() const { return lanes_per_vertex_; }

  static constexpr int kRingSlots = 24;  // neighbours stored per vertex; longer rings are walked again

 private:
  int lanes_per_vertex_ = 32;
  int width_ = 0, height_ = 0, border_ = 0, capacity_ = 0, cell_ = 1, cols_ = 0, rows_ = 0;
  size_t max_triangles_ = 0;
  uint32_t* border_ring_ = nullptr;  // border vertices, counter-clockwise
  uint32_t* points_ = nullptr;       // vertex array: border ring, then the kept interior vertices
  uint32_t* grid_points_ = nullptr;  // vertices grouped by cell
  int32_t* cell_count_ = nullptr;    // cells + 1
  int32_t* cell_start_ = nullptr;    // cells + 1
  int32_t* cell_cursor_ = nullptr;
  uint32_t* first_ = nullptr;        // start of each vertex's ring
  uint32_t* ring_ = nullptr;         // kRingSlots per vertex: the third vertex of each triangle
  int32_t* ring_length_ = nullptr;
  int32_t* owned_ = nullptr;         // triangles each vertex emits
  int32_t* offset_ = nullptr;
  void* cub_temp_ = nullptr;
  size_t cub_temp_bytes_ = 0;
};

}  // namespace sp::lowpoly
