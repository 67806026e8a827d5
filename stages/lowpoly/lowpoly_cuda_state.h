#pragma once
// The CUDA backend's state (lowpoly_cuda_setup.cu allocates it, lowpoly_cuda.cu runs the frames, lowpoly_cuda_access.cu
// reads counters and results back). Internal to the stage.
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "stages/lowpoly/lowpoly.h"
#include "stages/lowpoly/lowpoly_gpu_mesh.h"
#include "stages/lowpoly/lowpoly_gpu_repair.h"
#include "stages/lowpoly/lowpoly_gpu_voronoi.h"

namespace sp::lowpoly {

// CUDA events recorded after each phase of a frame. kHostChecked and kAdopted
// are on the check stream, which runs beside the shading (process_cuda).
enum CudaMark { kStart, kEdges, kPoints, kGrid, kStar, kEmit, kShaded, kHostChecked, kAdopted, kDone, kMarks };

struct LowpolyStage::CudaState {
  uint8_t *luma = nullptr, *edge = nullptr, *flags = nullptr, *tile_changed = nullptr;
  unsigned long long* weight_sum = nullptr;
  uint32_t* tile_ref = nullptr;
  int32_t* selected = nullptr;
  int* num_selected = nullptr;
  void* cub_temp = nullptr;
  size_t cub_temp_bytes = 0;
  Triangle* tris = nullptr;
  int* tri_count = nullptr;
  uint16_t* smooth = nullptr;
  GpuMesh gpu_mesh;
  // mesh: squares only: the repair, and events after the JFA, the squares and the certification.
  GpuSquaresRepair repair;
  cudaEvent_t squares_marks[3] = {};
  std::mutex repair_mutex;
  RepairStats repair_stats;  // the last frame's (host function)
  // voronoi_check or mesh: squares.
  GpuVoronoi voronoi;
  SquareStats* square_stats = nullptr;
  SquareStats* h_square_stats = nullptr;
  cudaEvent_t voronoi_marks[5] = {};  // start, after JFA, squares, comparison, statistics copied
  GpuMeshStatus* status = nullptr;
  // Pinned host side of the fallback (h_tri_count and h_tris mapped for the adopt kernel).
  int* h_count = nullptr;
  int32_t* h_selected = nullptr;
  GpuMeshStatus* h_status = nullptr;
  int* h_tri_count = nullptr;
  Triangle* h_tris = nullptr;
  int* d_host_tri_count = nullptr;
  Triangle* d_host_tris = nullptr;
  cudaEvent_t marks[kMarks] = {};
  cudaStream_t check_stream = nullptr;
  bool recorded = false;
  // Written by the host function, read by counters().
  const FramePlan* plan = nullptr;
  MeshBuilder* mesh = nullptr;
  std::atomic<double> host_ms{0}, points{0}, triangles{0}, dropped{0}, long_rings{0}, tests{0};
  std::atomic<int64_t> fallbacks{0};
  std::vector<Triangle> device_mesh;  // mesh(): a copy of the device's last mesh
  std::mutex error_mutex;
  std::string error;
  mutable StageCounters cached;
};

}  // namespace sp::lowpoly
