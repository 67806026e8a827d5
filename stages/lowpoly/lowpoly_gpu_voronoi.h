#pragma once
// The Voronoi diagnostic on the GPU (see lowpoly_voronoi.h): 1+JFA+2 over the
// (W+1) x (H+1) lattice seeded with the device mesh's vertices, triangles of
// the 2x2 squares compacted by a CUB scan, and their comparison with the
// exact mesh's rings. Same labels and counts as the CPU functions.
#include <cuda_runtime.h>

#include <vector>

#include "pipeline/scratch.h"
#include "stages/lowpoly/lowpoly_gpu_mesh.h"
#include "stages/lowpoly/lowpoly_voronoi.h"

namespace sp::lowpoly {

class GpuVoronoi {
 public:
  void configure(int width, int height, int max_vertices, ScratchAllocator& scratch);
  // marks[0..2] (optional) are recorded after the JFA, the squares and the comparison.
  void run(const RingView& rings, SquareStats* stats, cudaStream_t stream, cudaEvent_t const* marks = nullptr);
  // run() in two parts: the JFA and the compacted square triangles (marks[0..1]
  // after each; the squares route stops here), then their comparison with the mesh.
  void build_squares(const RingView& rings, SquareStats* stats, cudaStream_t stream, cudaEvent_t const* marks);
  void compare(const RingView& rings, SquareStats* stats, cudaStream_t stream);
  // After build_squares(): site-index triples, their count (device), the buffer's capacity.
  const int32_t* square_tris() const { return square_tris_; }
  const int* square_total() const { return total_; }
  int square_capacity() const { return capacity_; }
  // For tests, after run() and a synchronize: the (W+1) x (H+1) site indices.
  std::vector<int32_t> read_labels() const;
  size_t label_count() const { return size_t(width_ + 1) * (height_ + 1); }

 private:
  int width_ = 0, height_ = 0, pitch_ = 0, max_vertices_ = 0, capacity_ = 0;
  std::vector<int> steps_;
  // Packed nearest sites, rows of pitch_ words; ping-pong, labels_ holds the result.
  uint32_t *labels_ = nullptr, *spare_ = nullptr;
  int32_t* site_index_ = nullptr;  // at each site's own point: its index
  int32_t *square_count_ = nullptr, *square_offset_ = nullptr, *square_tris_ = nullptr;
  int* total_ = nullptr;
  uint32_t* found_ = nullptr;  // per (vertex, ring slot): an exact triangle a square produced
  void* cub_temp_ = nullptr;
  size_t cub_temp_bytes_ = 0;
};

}  // namespace sp::lowpoly
