// The CUDA backend's state of the lowpoly stage: allocation in configure()
// (everything a frame needs, so process_cuda never allocates) and release.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>

#include "pipeline/cuda_check.h"
#include "stages/lowpoly/lowpoly_cuda_state.h"

namespace sp::lowpoly {

void LowpolyStage::release_cuda() {
  if (!cuda_) return;
  cudaFreeHost(cuda_->h_count);
  cudaFreeHost(cuda_->h_selected);
  cudaFreeHost(cuda_->h_status);
  cudaFreeHost(cuda_->h_square_stats);
  for (cudaEvent_t e : cuda_->voronoi_marks)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : cuda_->squares_marks)
    if (e) cudaEventDestroy(e);
  cudaFreeHost(cuda_->h_tri_count);
  cudaFreeHost(cuda_->h_tris);
  for (cudaEvent_t e : cuda_->marks)
    if (e) cudaEventDestroy(e);
  if (cuda_->check_stream) cudaStreamDestroy(cuda_->check_stream);
  delete cuda_;
  cuda_ = nullptr;
}

void LowpolyStage::configure_cuda(ScratchAllocator& scratch) {
  release_cuda();
  cuda_ = new CudaState;
  CudaState& c = *cuda_;
  const size_t pixels = size_t(plan_.width) * plan_.height, tiles = size_t(plan_.tiles_x) * plan_.tiles_y;
  c.luma = scratch.allocate_array<uint8_t>(pixels);
  c.edge = scratch.allocate_array<uint8_t>(pixels);
  c.flags = scratch.allocate_array<uint8_t>(pixels);
  c.weight_sum = scratch.allocate_array<unsigned long long>(1);
  c.tile_ref = scratch.allocate_array<uint32_t>(tiles);
  c.tile_changed = scratch.allocate_array<uint8_t>(tiles);
  c.selected = scratch.allocate_array<int32_t>(pixels);
  c.num_selected = scratch.allocate_array<int>(1);
  c.tris = scratch.allocate_array<Triangle>(plan_.max_triangles());
  c.tri_count = scratch.allocate_array<int>(1);
  if (plan_.smoothing_q8 > 0) c.smooth = scratch.allocate_array<uint16_t>(4 * pixels);
  SP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, c.cub_temp_bytes, thrust::counting_iterator<int32_t>(0), c.flags,
                                           c.selected, c.num_selected, int(pixels)));
  c.cub_temp = scratch.allocate(std::max<size_t>(c.cub_temp_bytes, 1));
  SP_CUDA_CHECK(cudaMemset(c.flags, 0, pixels));  // border pixels are never selected
  SP_CUDA_CHECK(cudaHostAlloc(&c.h_count, sizeof(int), cudaHostAllocDefault));
  SP_CUDA_CHECK(cudaHostAlloc(&c.h_selected, sizeof(int32_t) * std::max(plan_.capacity, 1), cudaHostAllocDefault));
  SP_CUDA_CHECK(cudaHostAlloc(&c.h_status, sizeof(GpuMeshStatus), cudaHostAllocDefault));
  SP_CUDA_CHECK(cudaHostAlloc(&c.h_tri_count, sizeof(int), cudaHostAllocMapped));
  SP_CUDA_CHECK(cudaHostAlloc(&c.h_tris, sizeof(Triangle) * plan_.max_triangles(), cudaHostAllocMapped));
  SP_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&c.d_host_tri_count), c.h_tri_count, 0));
  SP_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&c.d_host_tris), c.h_tris, 0));
  c.status = scratch.allocate_array<GpuMeshStatus>(1);
  c.gpu_mesh.configure(plan_, scratch);
  if (lanes_per_vertex_ > 0) c.gpu_mesh.set_lanes_per_vertex(lanes_per_vertex_);
  const int max_vertices = int(plan_.border.size()) + plan_.capacity;
  if (settings_.mesh == MeshRoute::squares) {
    c.repair.configure(max_vertices, scratch);
    for (cudaEvent_t& e : c.squares_marks) SP_CUDA_CHECK(cudaEventCreate(&e));
  }
  if (settings_.voronoi_check || settings_.mesh == MeshRoute::squares) {
    c.voronoi.configure(plan_.width, plan_.height, max_vertices, scratch);
    c.square_stats = scratch.allocate_array<SquareStats>(1);
    SP_CUDA_CHECK(cudaHostAlloc(&c.h_square_stats, sizeof(SquareStats), cudaHostAllocDefault));
    *c.h_square_stats = SquareStats{};
    for (cudaEvent_t& e : c.voronoi_marks) SP_CUDA_CHECK(cudaEventCreate(&e));
  }
  for (cudaEvent_t& e : c.marks) SP_CUDA_CHECK(cudaEventCreate(&e));
  SP_CUDA_CHECK(cudaStreamCreateWithFlags(&c.check_stream, cudaStreamNonBlocking));
  c.plan = &plan_;
  c.mesh = &mesh_;
}

}  // namespace sp::lowpoly
