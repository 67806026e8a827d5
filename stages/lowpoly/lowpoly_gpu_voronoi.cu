// GPU Voronoi diagnostic of the lowpoly stage (see lowpoly_gpu_voronoi.h).
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <utility>

#include "pipeline/cuda_check.h"
#include "stages/lowpoly/lowpoly_gpu_voronoi.h"
#include "stages/lowpoly/lowpoly_predicates.h"

namespace sp::lowpoly {

namespace {

constexpr int kBlockW = 32, kBlockH = 8, kThreads = 256;

__global__ void seed_kernel(RingView r, int w1, int32_t* labels) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= r.status->points) return;
  const uint32_t p = r.points[i];
  labels[size_t(unpack_y(p)) * w1 + unpack_x(p)] = i;
}

__global__ void jfa_kernel(const int32_t* in, const uint32_t* sites, int w1, int h1, int step, int32_t* out) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= w1 || y >= h1) return;
  out[size_t(y) * w1 + x] = jfa_pick(in, sites, w1, h1, x, y, step);
}

__global__ void square_count_kernel(const int32_t* labels, int w, int h, int32_t* count) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= w || y >= h) return;
  int32_t t[6];
  count[size_t(y) * w + x] = square_triangles(labels, w + 1, x, y, t);
}

__global__ void square_emit_kernel(const int32_t* labels, int w, int h, const int32_t* offset, int capacity,
                                   int32_t* tris, SquareStats* stats) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= w || y >= h) return;
  int32_t t[6];
  const int n = square_triangles(labels, w + 1, x, y, t);
  const int o = offset[size_t(y) * w + x];
  for (int k = 0; k < n; ++k) {
    if (o + k >= capacity) {
      atomicAdd(&stats->overflow, 1);
      continue;
    }
    for (int j = 0; j < 3; ++j) tris[3 * size_t(o + k) + j] = t[3 * k + j];
  }
}

__global__ void square_total_kernel(const int32_t* count, const int32_t* offset, size_t squares, int* total,
                                    SquareStats* stats) {
  *total = offset[squares - 1] + count[squares - 1];
  stats->triangles = *total;
}

// One thread per square triangle: orientation, then membership in the ring of its smallest vertex.
__global__ void compare_kernel(RingView r, const int32_t* tris, const int* total, int capacity, uint32_t* found,
                               SquareStats* stats) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= min(*total, capacity)) return;
  int32_t v[3] = {tris[3 * size_t(t)], tris[3 * size_t(t) + 1], tris[3 * size_t(t) + 2]};
  const uint32_t a = r.points[v[0]], b = r.points[v[1]], c = r.points[v[2]];
  if (orient_packed(a, b, c) <= 0) {
    atomicAdd(&stats->not_ccw, 1);
    return;
  }
  const int m = (b < a && b < c) ? 1 : (c < a && c < b) ? 2 : 0;  // rotate to the smallest vertex
  const int32_t owner = v[m];
  const uint32_t q0 = r.points[v[(m + 1) % 3]], r0 = r.points[v[(m + 2) % 3]];
  const int length = r.ring_length[owner];
  if (length > GpuMesh::kRingSlots) return;  // not checked (never at the stage's densities)
  const uint32_t* slots = r.ring + size_t(owner) * GpuMesh::kRingSlots;
  uint32_t q = r.first[owner];
  for (int k = 0; k < length; ++k) {
    if (q == q0 && slots[k] == r0) {
      atomicAdd(&stats->delaunay, 1);
      if (atomicExch(&found[size_t(owner) * GpuMesh::kRingSlots + k], 1u) != 0) return;  // a duplicate
      atomicAdd(&stats->distinct_delaunay, 1);
      return;
    }
    q = slots[k];
  }
}

__global__ void missing_kernel(RingView r, SquareStats* stats) {
  stats->missing = r.status->expected - stats->distinct_delaunay;
}

dim3 grid_for(int w, int h) { return dim3((w + kBlockW - 1) / kBlockW, (h + kBlockH - 1) / kBlockH); }

}  // namespace

void GpuVoronoi::configure(int width, int height, int max_vertices, ScratchAllocator& scratch) {
  width_ = width, height_ = height, max_vertices_ = max_vertices;
  capacity_ = 4 * max_vertices + 1024;  // about 2n square triangles; the overflow counter says when not
  const size_t points = label_count(), squares = size_t(width) * height;
  steps_ = jfa_steps(width + 1, height + 1, JfaVariant::one_plus_plus_two);
  labels_ = scratch.allocate_array<int32_t>(points);
  spare_ = scratch.allocate_array<int32_t>(points);
  square_count_ = scratch.allocate_array<int32_t>(squares);
  square_offset_ = scratch.allocate_array<int32_t>(squares);
  square_tris_ = scratch.allocate_array<int32_t>(3 * size_t(capacity_));
  total_ = scratch.allocate_array<int>(1);
  found_ = scratch.allocate_array<uint32_t>(size_t(max_vertices) * GpuMesh::kRingSlots);
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub_temp_bytes_, square_count_, square_offset_, int(squares)));
  cub_temp_ = scratch.allocate(std::max<size_t>(cub_temp_bytes_, 1));
}

void GpuVoronoi::run(const RingView& rings, SquareStats* stats, cudaStream_t stream, cudaEvent_t const* marks) {
  build_squares(rings, stats, stream, marks);
  compare(rings, stats, stream);
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[2], stream));
}

void GpuVoronoi::build_squares(const RingView& rings, SquareStats* stats, cudaStream_t stream,
                               cudaEvent_t const* marks) {
  const int w1 = width_ + 1, h1 = height_ + 1;
  const size_t squares = size_t(width_) * height_;
  SP_CUDA_CHECK(cudaMemsetAsync(stats, 0, sizeof(SquareStats), stream));
  // Steps ping-pong between the two buffers; start so that the last one lands in labels_.
  int32_t* in = steps_.size() % 2 ? spare_ : labels_;
  int32_t* out = steps_.size() % 2 ? labels_ : spare_;
  SP_CUDA_CHECK(cudaMemsetAsync(in, 0xFF, label_count() * sizeof(int32_t), stream));
  seed_kernel<<<(rings.max_vertices + kThreads - 1) / kThreads, kThreads, 0, stream>>>(rings, w1, in);
  SP_CUDA_CHECK_LAUNCH();
  for (int step : steps_) {
    jfa_kernel<<<grid_for(w1, h1), dim3(kBlockW, kBlockH), 0, stream>>>(in, rings.points, w1, h1, step, out);
    SP_CUDA_CHECK_LAUNCH();
    std::swap(in, out);
  }
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[0], stream));
  square_count_kernel<<<grid_for(width_, height_), dim3(kBlockW, kBlockH), 0, stream>>>(labels_, width_, height_,
                                                                                          square_count_);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_temp_, cub_temp_bytes_, square_count_, square_offset_, int(squares),
                                              stream));
  square_emit_kernel<<<grid_for(width_, height_), dim3(kBlockW, kBlockH), 0, stream>>>(
      labels_, width_, height_, square_offset_, capacity_, square_tris_, stats);
  SP_CUDA_CHECK_LAUNCH();
  square_total_kernel<<<1, 1, 0, stream>>>(square_count_, square_offset_, squares, total_, stats);
  SP_CUDA_CHECK_LAUNCH();
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[1], stream));
}

void GpuVoronoi::compare(const RingView& rings, SquareStats* stats, cudaStream_t stream) {
  SP_CUDA_CHECK(cudaMemsetAsync(found_, 0, size_t(max_vertices_) * GpuMesh::kRingSlots * sizeof(uint32_t), stream));
  compare_kernel<<<(capacity_ + kThreads - 1) / kThreads, kThreads, 0, stream>>>(rings, square_tris_, total_,
                                                                                 capacity_, found_, stats);
  SP_CUDA_CHECK_LAUNCH();
  missing_kernel<<<1, 1, 0, stream>>>(rings, stats);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::lowpoly
