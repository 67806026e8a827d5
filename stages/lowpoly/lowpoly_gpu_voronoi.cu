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

// The GPU's label map holds the nearest site's packed coordinates, not its
// index: a jump step then compares candidates without a gather, and the order
// (distance, then packed value) is the CPU's. Rows are padded to a multiple of
// 4 words so a thread moves 4 points with 16-byte loads; padding stays kNone.
constexpr uint32_t kNone = 0xFFFFFFFFu;

__global__ void seed_kernel(RingView r, int pitch, uint32_t* labels, int32_t* site_index) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= r.status->points) return;
  const uint32_t p = r.points[i];
  const size_t at = size_t(unpack_y(p)) * pitch + unpack_x(p);
  labels[at] = p;
  site_index[at] = i;
}

// (squared distance, packed site): the smaller wins; kNone never does.
__device__ __forceinline__ uint64_t jfa_key(uint32_t site, int x, int y) {
  const uint32_t dx = uint32_t(int(site & 0xFFFFu) - x), dy = uint32_t(int(site >> 16) - y);
  return site == kNone ? ~0ull : (uint64_t(dx * dx + dy * dy) << 32) | site;
}

__device__ __forceinline__ uint4 load4(const uint32_t* row, int x, int pitch) {
  return x >= 0 && x < pitch ? *reinterpret_cast<const uint4*>(row + x) : make_uint4(kNone, kNone, kNone, kNone);
}

// One jump step for the 4 points (x0..x0+3, y): each takes the best of its own
// label and the 8 at `step`. kStep 1 or 2 reads them out of the three aligned
// quads around x0; kStep 0 means a multiple of 4, where they are whole quads.
template <int kStep>
__global__ void jfa_kernel(const uint32_t* in, int pitch, int w1, int h1, int step, uint32_t* out) {
  const int x0 = 4 * (blockIdx.x * kBlockW + threadIdx.x), y = blockIdx.y * kBlockH + threadIdx.y;
  if (x0 >= pitch || y >= h1) return;
  const int dx = kStep ? 4 : step;
  uint64_t best[4] = {~0ull, ~0ull, ~0ull, ~0ull};
  for (int r = -1; r <= 1; ++r) {
    const int ny = y + r * step;
    if (ny < 0 || ny >= h1) continue;
    const uint32_t* row = in + size_t(ny) * pitch;
    const uint4 a = load4(row, x0 - dx, pitch), c = load4(row, x0, pitch), b = load4(row, x0 + dx, pitch);
    const uint32_t v[12] = {a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int left = kStep ? 4 + j - kStep : j, right = kStep ? 4 + j + kStep : 8 + j;
      const uint32_t candidates[3] = {v[left], v[4 + j], v[right]};
#pragma unroll
      for (uint32_t site : candidates) best[j] = min(best[j], jfa_key(site, x0 + j, y));
    }
  }
  uint4 o;
  uint32_t* lanes = &o.x;
#pragma unroll
  for (int j = 0; j < 4; ++j) lanes[j] = x0 + j < w1 ? uint32_t(best[j]) : kNone;
  *reinterpret_cast<uint4*>(out + size_t(y) * pitch + x0) = o;
}

__global__ void square_count_kernel(const uint32_t* labels, int pitch, int w, int h, int32_t* count) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= w || y >= h) return;
  int32_t t[6];
  count[size_t(y) * w + x] = square_triangles(reinterpret_cast<const int32_t*>(labels), pitch, x, y, t);
}

// Emits the square's triangles as site indices (the labels are packed sites).
__global__ void square_emit_kernel(const uint32_t* labels, const int32_t* site_index, int pitch, int w, int h,
                                   const int32_t* offset, int capacity, int32_t* tris, SquareStats* stats) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= w || y >= h) return;
  int32_t t[6];
  const int n = square_triangles(reinterpret_cast<const int32_t*>(labels), pitch, x, y, t);
  const int o = offset[size_t(y) * w + x];
  for (int k = 0; k < n; ++k) {
    if (o + k >= capacity) {
      atomicAdd(&stats->overflow, 1);
      continue;
    }
    for (int j = 0; j < 3; ++j) {
      const uint32_t p = uint32_t(t[3 * k + j]);
      tris[3 * size_t(o + k) + j] = site_index[size_t(unpack_y(p)) * pitch + unpack_x(p)];
    }
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
  pitch_ = (width + 1 + 3) / 4 * 4;
  capacity_ = 4 * max_vertices + 1024;  // about 2n square triangles; the overflow counter says when not
  const size_t points = size_t(pitch_) * (height + 1), squares = size_t(width) * height;
  steps_ = jfa_steps(width + 1, height + 1, JfaVariant::one_plus_plus_two);
  labels_ = scratch.allocate_array<uint32_t>(points);
  spare_ = scratch.allocate_array<uint32_t>(points);
  site_index_ = scratch.allocate_array<int32_t>(points);
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
  uint32_t* in = steps_.size() % 2 ? spare_ : labels_;
  uint32_t* out = steps_.size() % 2 ? labels_ : spare_;
  SP_CUDA_CHECK(cudaMemsetAsync(in, 0xFF, size_t(pitch_) * h1 * sizeof(uint32_t), stream));
  seed_kernel<<<(rings.max_vertices + kThreads - 1) / kThreads, kThreads, 0, stream>>>(rings, pitch_, in,
                                                                                        site_index_);
  SP_CUDA_CHECK_LAUNCH();
  const dim3 quads = grid_for(pitch_ / 4, h1), block(kBlockW, kBlockH);
  for (int step : steps_) {
    if (step == 1) jfa_kernel<1><<<quads, block, 0, stream>>>(in, pitch_, w1, h1, step, out);
    else if (step == 2) jfa_kernel<2><<<quads, block, 0, stream>>>(in, pitch_, w1, h1, step, out);
    else jfa_kernel<0><<<quads, block, 0, stream>>>(in, pitch_, w1, h1, step, out);
    SP_CUDA_CHECK_LAUNCH();
    std::swap(in, out);
  }
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[0], stream));
  square_count_kernel<<<grid_for(width_, height_), block, 0, stream>>>(labels_, pitch_, width_, height_,
                                                                       square_count_);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_temp_, cub_temp_bytes_, square_count_, square_offset_, int(squares),
                                              stream));
  square_emit_kernel<<<grid_for(width_, height_), block, 0, stream>>>(
      labels_, site_index_, pitch_, width_, height_, square_offset_, capacity_, square_tris_, stats);
  SP_CUDA_CHECK_LAUNCH();
  square_total_kernel<<<1, 1, 0, stream>>>(square_count_, square_offset_, squares, total_, stats);
  SP_CUDA_CHECK_LAUNCH();
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[1], stream));
}

std::vector<int32_t> GpuVoronoi::read_labels() const {
  const size_t padded = size_t(pitch_) * (height_ + 1);
  std::vector<uint32_t> sites(padded);
  std::vector<int32_t> index(padded), out(label_count());
  SP_CUDA_CHECK(cudaMemcpy(sites.data(), labels_, padded * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  SP_CUDA_CHECK(cudaMemcpy(index.data(), site_index_, padded * sizeof(int32_t), cudaMemcpyDeviceToHost));
  for (int y = 0; y <= height_; ++y)
    for (int x = 0; x <= width_; ++x) {
      const uint32_t p = sites[size_t(y) * pitch_ + x];
      out[size_t(y) * (width_ + 1) + x] = p == kNone ? kNoSite : index[size_t(unpack_y(p)) * pitch_ + unpack_x(p)];
    }
  return out;
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
