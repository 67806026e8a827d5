#pragma once
// The repair of the squares route on the GPU (lowpoly_repair.h has the
// algorithm, shared with the CPU): one thread per square triangle keeps it
// when its circumcircle is empty and files its three link edges with its
// vertices; one thread per vertex then tries to close its ring from those
// edges alone; the vertices left open (the squares' holes) are compacted and
// walked by one warp each, searching only the missing steps. The rings land
// in GpuMesh's workspace, and GpuMesh::emit() makes and certifies the
// triangles exactly as for the star construction.
#include <cuda_runtime.h>

#include <cstdint>

#include "pipeline/scratch.h"
#include "stages/lowpoly/lowpoly_gpu_mesh.h"

namespace sp::lowpoly {

class GpuSquaresRepair {
 public:
  static constexpr int kKnownSlots = sp::lowpoly::kKnownSlots;  // lowpoly_repair.h

  void configure(int max_vertices, ScratchAllocator& scratch);
  // `square_tris`: site-index triples into ws.points, *square_total of them (device), at most `capacity` stored.
  // marks[0] (optional) is recorded after the certification.
  void run(const MeshWorkspace& ws, const int32_t* square_tris, const int* square_total, int capacity,
           GpuMeshStatus* status, cudaStream_t stream, cudaEvent_t const* marks = nullptr);

 private:
  int max_vertices_ = 0;
  int32_t* known_count_ = nullptr;  // per vertex: known link edges filed (may exceed the slots)
  uint32_t* known_q_ = nullptr;     // kKnownSlots per vertex
  uint32_t* known_r_ = nullptr;
  int32_t* open_ = nullptr;         // vertices whose ring the known edges do not close
  int* open_count_ = nullptr;
};

}  // namespace sp::lowpoly
