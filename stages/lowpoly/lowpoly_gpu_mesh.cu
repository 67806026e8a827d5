// GPU star construction of the lowpoly mesh (see lowpoly_gpu_mesh.h and lowpoly_star.h).
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <vector>

#include "pipeline/cuda_check.h"
#include "stages/lowpoly/lowpoly.h"
#include "stages/lowpoly/lowpoly_gpu_mesh.h"
#include "stages/lowpoly/lowpoly_gpu_warp.cuh"
#include "stages/lowpoly/lowpoly_star_mesh.h"

namespace sp::lowpoly {

namespace {

constexpr int kThreads = 64;  // small blocks: ~10k vertex threads spread over all SMs

struct GridShape {
  int cell, cols, width;
};
__device__ int cell_of(const GridShape& s, uint32_t p) { return (unpack_y(p) / s.cell) * s.cols + unpack_x(p) / s.cell; }

__global__ void points_kernel(const uint32_t* border, int border_count, const int32_t* selected,
                              const int* num_selected, int capacity, GridShape shape, uint32_t* points,
                              int32_t* cell_count, GpuMeshStatus* status) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int selected_count = *num_selected;
  const int n = border_count + min(selected_count, capacity);
  if (i == 0) {
    *status = GpuMeshStatus{};
    status->points = n;
    status->dropped = max(0, selected_count - capacity);
    status->expected = 2 * n - 2 - border_count;
  }
  if (i >= n) return;
  uint32_t p;
  if (i < border_count) {
    p = border[i];
  } else {
    const int pixel = selected[i - border_count];
    p = pack_xy(pixel % shape.width, pixel / shape.width);
  }
  points[i] = p;
  atomicAdd(&cell_count[cell_of(shape, p)], 1);
}

__global__ void scatter_kernel(const uint32_t* points, const GpuMeshStatus* status, GridShape shape,
                               const int32_t* cell_start, int32_t* cursor, uint32_t* grid_points) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= status->points) return;
  const uint32_t p = points[i];
  const int c = cell_of(shape, p);
  grid_points[cell_start[c] + atomicAdd(&cursor[c], 1)] = p;  // order within a cell does not matter
}

struct RingEnds {
  uint32_t first, last;
};
// A border vertex's ring runs between its border neighbours; an interior
// one's starts at its nearest vertex (found by `nearest`, a thread's or a
// group's search) and closes on itself.
template <class Nearest>
__device__ RingEnds ring_ends(const uint32_t* border, int border_count, int i, Nearest nearest) {
  if (i < border_count)
    return {border[(i + 1) % border_count], border[(i + border_count - 1) % border_count]};
  return {nearest(), kNoVertex};
}

// A vertex's walk, as emit_kernel reads it back, and the frame's counters.
__device__ void record_walk(int i, uint32_t first, int steps, int owned, int tests, GpuMeshStatus* status,
                            uint32_t* first_out, int32_t* ring_length, int32_t* owned_out) {
  first_out[i] = first;
  ring_length[i] = steps;
  owned_out[i] = steps < 0 ? 0 : owned;
  if (steps < 0) atomicOr(&status->failed, 1);
  if (steps > GpuMesh::kRingSlots) atomicAdd(&status->long_rings, 1);
  atomicAdd(&status->in_circle_tests, (unsigned long long)tests);
}

// One thread per vertex: walk the ring, keep its first kRingSlots third vertices, count the owned triangles.
__global__ void star_kernel(VertexGrid g, const uint32_t* points, const uint32_t* border, int border_count,
                            int max_vertices, GpuMeshStatus* status, uint32_t* first_out, uint32_t* ring,
                            int32_t* ring_length, int32_t* owned_out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= max_vertices) return;
  const int n = status->points;
  if (i >= n) {
    owned_out[i] = 0;  // the scan runs over the capacity
    return;
  }
  const uint32_t p = points[i];
  const RingEnds ends = ring_ends(border, border_count, i, [&] { return nearest_vertex(g, p, kStarRadius); });
  uint32_t* slots = ring + size_t(i) * GpuMesh::kRingSlots;
  int length = 0, owned = 0, tests = 0;
  const int steps = walk_star(g, p, ends.first, ends.last, n, kStarRadius, &tests, [&](uint32_t q, uint32_t r) {
    if (length < GpuMesh::kRingSlots) slots[length] = r;
    ++length;
    owned += owns_triangle(p, q, r);
  });
  record_walk(i, ends.first, steps, owned, tests, status, first_out, ring_length, owned_out);
}

// One group of kLanes lanes per vertex: same outputs as star_kernel.
template <int kLanes>
__global__ void star_group_kernel(VertexGrid g, const uint32_t* points, const uint32_t* border, int border_count,
                                  int max_vertices, GpuMeshStatus* status, uint32_t* first_out, uint32_t* ring,
                                  int32_t* ring_length, int32_t* owned_out) {
  using Group = LaneGroup<kLanes>;
  const int i = int((size_t(blockIdx.x) * blockDim.x + threadIdx.x) / kLanes);
  const bool leader = Group::lane() == 0;
  if (i >= max_vertices) return;  // whole groups
  const int n = status->points;
  if (i >= n) {
    if (leader) owned_out[i] = 0;
    return;
  }
  const uint32_t p = points[i];
  const RingEnds ends =
      ring_ends(border, border_count, i, [&] { return group_nearest<kLanes>(g, p, kStarRadius); });
  uint32_t* slots = ring + size_t(i) * GpuMesh::kRingSlots;
  int length = 0, owned = 0, tests = 0;
  const int steps = walk_ring(
      ends.first, ends.last, n, [&](uint32_t q) { return group_third_vertex<kLanes>(g, p, q, kStarRadius, &tests); },
      [&](uint32_t q, uint32_t r) {
        if (leader && length < GpuMesh::kRingSlots) slots[length] = r;
        ++length;
        owned += owns_triangle(p, q, r);
      });
  tests = Group::sum(tests);
  if (leader) record_walk(i, ends.first, steps, owned, tests, status, first_out, ring_length, owned_out);
}

template <int kLanes>
void launch_star_groups(const VertexGrid& g, const uint32_t* points, const uint32_t* border, int border_count,
                        int max_vertices, GpuMeshStatus* status, uint32_t* first, uint32_t* ring, int32_t* ring_length,
                        int32_t* owned, cudaStream_t stream) {
  constexpr int kBlock = 128;
  const int blocks = int((size_t(max_vertices) * kLanes + kBlock - 1) / kBlock);
  star_group_kernel<kLanes><<<blocks, kBlock, 0, stream>>>(g, points, border, border_count, max_vertices, status, first,
                                                           ring, ring_length, owned);
}

__global__ void emit_kernel(VertexGrid g, const uint32_t* points, const uint32_t* border, int border_count,
                            GpuMeshStatus* status, const uint32_t* first_in, const uint32_t* ring,
                            const int32_t* ring_length, const int32_t* owned, const int32_t* offset,
                            size_t max_triangles, Triangle* tris) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= status->points || owned[i] == 0) return;
  const uint32_t p = points[i];
  size_t o = size_t(offset[i]);
  if (o + owned[i] > max_triangles) {
    atomicOr(&status->failed, 4);
    return;
  }
  const int length = ring_length[i];
  if (length <= GpuMesh::kRingSlots) {
    const uint32_t* slots = ring + size_t(i) * GpuMesh::kRingSlots;
    uint32_t q = first_in[i];
    for (int k = 0; k < length; ++k) {
      const uint32_t r = slots[k];
      if (owns_triangle(p, q, r)) tris[o++] = Triangle{p, q, r};
      q = r;
    }
    return;
  }
  // A long ring (a vertex among many border points): walk it again, writing as it goes.
  const RingEnds ends = ring_ends(border, border_count, i, [&] { return nearest_vertex(g, p, kStarRadius); });
  int tests = 0;
  walk_star(g, p, ends.first, ends.last, status->points, kStarRadius, &tests, [&](uint32_t q, uint32_t r) {
    if (owns_triangle(p, q, r)) tris[o++] = Triangle{p, q, r};
  });
}

__global__ void finish_kernel(const int32_t* owned, const int32_t* offset, int max_vertices, GpuMeshStatus* status,
                              bool force_fail, int* tri_count) {
  if (force_fail) status->failed |= 8;
  const int total = offset[max_vertices - 1] + owned[max_vertices - 1];
  status->triangles = total;
  if (total != status->expected) status->failed |= 2;
  *tri_count = status->failed ? 0 : total;
}

int blocks_for(size_t n) { return int((n + kThreads - 1) / kThreads); }

}  // namespace

void GpuMesh::configure(const FramePlan& plan, ScratchAllocator& scratch) {
  width_ = plan.width, height_ = plan.height;
  capacity_ = plan.capacity;
  std::vector<uint32_t> border = border_ring(plan.border, plan.width, plan.height);
  border_ = int(border.size());
  max_triangles_ = plan.max_triangles();
  const size_t max_vertices = size_t(border_) + capacity_;
  cell_ = star_cell_size(width_, height_, int64_t(max_vertices) - capacity_ + plan.expected_points);
  cols_ = grid_cols(width_, cell_), rows_ = grid_cols(height_, cell_);
  const size_t cells = size_t(cols_) * rows_;
  border_ring_ = scratch.allocate_array<uint32_t>(border.size());
  points_ = scratch.allocate_array<uint32_t>(max_vertices);
  grid_points_ = scratch.allocate_array<uint32_t>(max_vertices);
  cell_count_ = scratch.allocate_array<int32_t>(cells + 1);
  cell_start_ = scratch.allocate_array<int32_t>(cells + 1);
  cell_cursor_ = scratch.allocate_array<int32_t>(cells);
  first_ = scratch.allocate_array<uint32_t>(max_vertices);
  ring_ = scratch.allocate_array<uint32_t>(max_vertices * kRingSlots);
  ring_length_ = scratch.allocate_array<int32_t>(max_vertices);
  owned_ = scratch.allocate_array<int32_t>(max_vertices);
  offset_ = scratch.allocate_array<int32_t>(max_vertices);
  size_t a = 0, b = 0;
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, a, cell_count_, cell_start_, int(cells + 1)));
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b, owned_, offset_, int(max_vertices)));
  cub_temp_bytes_ = std::max<size_t>({a, b, 1});
  cub_temp_ = scratch.allocate(cub_temp_bytes_);
  SP_CUDA_CHECK(cudaMemcpy(border_ring_, border.data(), border.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
  int device = 0, sms = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  lanes_per_vertex_ = max_vertices <= size_t(sms) * 128 ? 8 : 4;
}

MeshWorkspace GpuMesh::workspace() const {
  MeshWorkspace w;
  w.grid.points = grid_points_, w.grid.start = cell_start_, w.grid.cols = cols_, w.grid.rows = rows_;
  w.grid.cell = cell_, w.grid.width = width_, w.grid.height = height_;
  w.points = points_, w.border = border_ring_, w.border_count = border_, w.max_vertices = border_ + capacity_;
  w.first = first_, w.ring = ring_, w.ring_length = ring_length_, w.owned = owned_;
  return w;
}

void GpuMesh::build_grid(const int32_t* selected, const int* num_selected, GpuMeshStatus* status,
                         cudaStream_t stream) {
  const size_t max_vertices = size_t(border_) + capacity_;
  const size_t cells = size_t(cols_) * rows_;
  const GridShape shape{cell_, cols_, width_};
  SP_CUDA_CHECK(cudaMemsetAsync(cell_count_, 0, (cells + 1) * sizeof(int32_t), stream));
  SP_CUDA_CHECK(cudaMemsetAsync(cell_cursor_, 0, cells * sizeof(int32_t), stream));
  points_kernel<<<blocks_for(max_vertices), kThreads, 0, stream>>>(border_ring_, border_, selected, num_selected,
                                                                    capacity_, shape, points_, cell_count_, status);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_temp_, cub_temp_bytes_, cell_count_, cell_start_, int(cells + 1),
                                              stream));
  scatter_kernel<<<blocks_for(max_vertices), kThreads, 0, stream>>>(points_, status, shape, cell_start_, cell_cursor_,
                                                                     grid_points_);
  SP_CUDA_CHECK_LAUNCH();
}

void GpuMesh::walk_stars(GpuMeshStatus* status, cudaStream_t stream) {
  const size_t max_vertices = size_t(border_) + capacity_;
  const VertexGrid g = workspace().grid;
  const int n = int(max_vertices);
  const auto groups = [&](auto launch) {
    launch(g, points_, border_ring_, border_, n, status, first_, ring_, ring_length_, owned_, stream);
  };
  switch (lanes_per_vertex_) {
    case 32: groups(launch_star_groups<32>); break;
    case 16: groups(launch_star_groups<16>); break;
    case 8: groups(launch_star_groups<8>); break;
    case 4: groups(launch_star_groups<4>); break;
    default:
      star_kernel<<<blocks_for(max_vertices), kThreads, 0, stream>>>(g, points_, border_ring_, border_, n, status,
                                                                      first_, ring_, ring_length_, owned_);
  }
  SP_CUDA_CHECK_LAUNCH();
}

void GpuMesh::emit(Triangle* tris, int* tri_count, GpuMeshStatus* status, cudaStream_t stream, bool force_fail) {
  const size_t max_vertices = size_t(border_) + capacity_;
  const VertexGrid g = workspace().grid;
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_temp_, cub_temp_bytes_, owned_, offset_, int(max_vertices), stream));
  emit_kernel<<<blocks_for(max_vertices), kThreads, 0, stream>>>(g, points_, border_ring_, border_, status, first_,
                                                                  ring_, ring_length_, owned_, offset_,
                                                                  max_triangles_, tris);
  SP_CUDA_CHECK_LAUNCH();
  finish_kernel<<<1, 1, 0, stream>>>(owned_, offset_, int(max_vertices), status, force_fail, tri_count);
  SP_CUDA_CHECK_LAUNCH();
}

void GpuMesh::build(const int32_t* selected, const int* num_selected, Triangle* tris, int* tri_count,
                    GpuMeshStatus* status, cudaStream_t stream, cudaEvent_t const* marks, bool force_fail) {
  build_grid(selected, num_selected, status, stream);
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[int(GpuMeshMark::grid)], stream));
  walk_stars(status, stream);
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[int(GpuMeshMark::star)], stream));
  emit(tris, tri_count, status, stream, force_fail);
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[int(GpuMeshMark::emit)], stream));
}

}  // namespace sp::lowpoly
