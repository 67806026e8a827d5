// GPU repair of the squares route (see lowpoly_gpu_repair.h and lowpoly_repair.h).
#include "pipeline/cuda_check.h"
#include "stages/lowpoly/lowpoly_gpu_repair.h"
#include "stages/lowpoly/lowpoly_gpu_warp.cuh"
#include "stages/lowpoly/lowpoly_star_mesh.h"

namespace sp::lowpoly {

namespace {

constexpr int kThreads = 128;
constexpr int K = GpuSquaresRepair::kKnownSlots;

// One thread per square triangle: keep it or say why not; a kept one files
// (a, b, c) as a: b -> c, b: c -> a, c: a -> b.
__global__ void certify_kernel(MeshWorkspace ws, const int32_t* tris, const int* total, int capacity,
                               int32_t* known_count, uint32_t* known_q, uint32_t* known_r, GpuMeshStatus* status) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t == 0) status->repair.square_triangles = *total, status->repair.square_overflow = max(0, *total - capacity);
  if (t >= min(*total, capacity)) return;
  const int32_t v[3] = {tris[3 * size_t(t)], tris[3 * size_t(t) + 1], tris[3 * size_t(t) + 2]};
  const uint32_t a = ws.points[v[0]], b = ws.points[v[1]], c = ws.points[v[2]];
  int tests = 0;
  const SquareVerdict verdict = judge_square_triangle(ws.grid, a, b, c, &tests);
  if (tests) atomicAdd(&status->in_circle_tests, (unsigned long long)tests);
  if (verdict == SquareVerdict::flipped) {
    atomicAdd(&status->repair.flipped, 1);
    return;
  }
  if (verdict == SquareVerdict::not_delaunay) {
    atomicAdd(&status->repair.not_delaunay, 1);
    return;
  }
  atomicAdd(&status->repair.certified, 1);
  for (int k = 0; k < 3; ++k) {
    const int32_t owner = v[k];
    const int slot = atomicAdd(&known_count[owner], 1);
    if (slot >= K) {
      atomicAdd(&status->repair.known_overflow, 1);
      continue;
    }
    known_q[size_t(owner) * K + slot] = ws.points[v[(k + 1) % 3]];
    known_r[size_t(owner) * K + slot] = ws.points[v[(k + 2) % 3]];
  }
}

struct Ends {
  uint32_t first, last;
};
// Ring ends from the known edges only (first = kNoVertex: an interior vertex with none).
__device__ Ends known_ends(const MeshWorkspace& ws, int i, const uint32_t* kq, int count) {
  const int b = ws.border_count;
  const bool border = i < b;
  return {ring_start(border, border ? ws.border[(i + 1) % b] : kNoVertex, kq, count),
          border ? ws.border[(i + b - 1) % b] : kNoVertex};
}

// One thread per vertex: close the ring from known edges alone, else file the vertex as open.
__global__ void close_kernel(MeshWorkspace ws, GpuMeshStatus* status, const int32_t* known_count,
                             const uint32_t* known_q, const uint32_t* known_r, int32_t* open, int* open_count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= ws.max_vertices) return;
  const int n = status->points;
  if (i >= n) {
    ws.owned[i] = 0;  // the scan runs over the capacity
    return;
  }
  const uint32_t p = ws.points[i];
  const int count = min(known_count[i], K);
  const uint32_t *kq = known_q + size_t(i) * K, *kr = known_r + size_t(i) * K;
  const Ends ends = known_ends(ws, i, kq, count);
  uint32_t* slots = ws.ring + size_t(i) * GpuMesh::kRingSlots;
  int length = 0, owned = 0;
  RingRepairCounts counts;
  const int steps = close_ring_from_known(p, ends.first, ends.last, n, kq, kr, count, &counts,
                                         [&](uint32_t q, uint32_t r) {
                                           if (length < GpuMesh::kRingSlots) slots[length] = r;
                                           ++length;
                                           owned += owns_triangle(p, q, r);
                                         });
  if (steps < 0) {
    open[atomicAdd(open_count, 1)] = i;
    return;
  }
  ws.first[i] = ends.first;
  ws.ring_length[i] = steps;
  ws.owned[i] = owned;
  if (steps > GpuMesh::kRingSlots) atomicAdd(&status->long_rings, 1);
  if (counts.owned_known) atomicAdd(&status->repair.kept, counts.owned_known);
}

// One warp per open vertex: the ring walk, searching (warp-wide) only where no known edge leads on.
__global__ void repair_warp_kernel(MeshWorkspace ws, GpuMeshStatus* status, const int32_t* known_count,
                                   const uint32_t* known_q, const uint32_t* known_r, const int32_t* open,
                                   const int* open_count) {
  const int w = int((size_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5);
  const bool leader = (threadIdx.x & 31) == 0;
  if (w >= *open_count) return;  // whole warps
  const int i = open[w], n = status->points;
  const uint32_t p = ws.points[i];
  const int count = min(known_count[i], K);
  const uint32_t *kq = known_q + size_t(i) * K, *kr = known_r + size_t(i) * K;
  Ends ends = known_ends(ws, i, kq, count);
  if (ends.first == kNoVertex) ends.first = group_nearest(ws.grid, p, kStarRadius);
  uint32_t* slots = ws.ring + size_t(i) * GpuMesh::kRingSlots;
  int length = 0, owned = 0, tests = 0;
  RingRepairCounts counts;
  const int steps = repair_ring(
      p, ends.first, ends.last, n, kq, kr, count, &counts,
      [&](uint32_t q) { return group_third_vertex(ws.grid, p, q, kStarRadius, &tests); },
      [&](uint32_t q, uint32_t r) {
        if (leader && length < GpuMesh::kRingSlots) slots[length] = r;
        ++length;
        owned += owns_triangle(p, q, r);
      });
  for (int o = 16; o > 0; o >>= 1) tests += __shfl_xor_sync(0xFFFFFFFFu, tests, o);
  if (!leader) return;
  ws.first[i] = ends.first;
  ws.ring_length[i] = steps;
  ws.owned[i] = steps < 0 ? 0 : owned;
  if (steps < 0) atomicOr(&status->failed, 1);
  if (steps > GpuMesh::kRingSlots) atomicAdd(&status->long_rings, 1);
  atomicAdd(&status->in_circle_tests, (unsigned long long)tests);
  RepairStats& r = status->repair;
  atomicAdd(&r.kept, counts.owned_known);
  atomicAdd(&r.repaired_triangles, counts.owned_searched);
  atomicAdd(&r.repaired_vertices, counts.searches > 0 ? 1 : 0);
  atomicAdd(&r.repair_searches, counts.searches);
}

int blocks_for(size_t n) { return int((n + kThreads - 1) / kThreads); }

}  // namespace

void GpuSquaresRepair::configure(int max_vertices, ScratchAllocator& scratch) {
  max_vertices_ = max_vertices;
  known_count_ = scratch.allocate_array<int32_t>(size_t(max_vertices));
  known_q_ = scratch.allocate_array<uint32_t>(size_t(max_vertices) * K);
  known_r_ = scratch.allocate_array<uint32_t>(size_t(max_vertices) * K);
  open_ = scratch.allocate_array<int32_t>(size_t(max_vertices));
  open_count_ = scratch.allocate_array<int>(1);
}

void GpuSquaresRepair::run(const MeshWorkspace& ws, const int32_t* square_tris, const int* square_total, int capacity,
                           GpuMeshStatus* status, cudaStream_t stream, cudaEvent_t const* marks) {
  SP_CUDA_CHECK(cudaMemsetAsync(known_count_, 0, size_t(max_vertices_) * sizeof(int32_t), stream));
  SP_CUDA_CHECK(cudaMemsetAsync(open_count_, 0, sizeof(int), stream));
  certify_kernel<<<blocks_for(size_t(capacity)), kThreads, 0, stream>>>(ws, square_tris, square_total, capacity,
                                                                        known_count_, known_q_, known_r_, status);
  SP_CUDA_CHECK_LAUNCH();
  if (marks) SP_CUDA_CHECK(cudaEventRecord(marks[0], stream));
  close_kernel<<<blocks_for(size_t(ws.max_vertices)), kThreads, 0, stream>>>(ws, status, known_count_, known_q_,
                                                                             known_r_, open_, open_count_);
  SP_CUDA_CHECK_LAUNCH();
  // As many warps as vertices could be open; those past the count return at once.
  constexpr int kWarpBlock = 128;
  const int blocks = int((size_t(ws.max_vertices) * 32 + kWarpBlock - 1) / kWarpBlock);
  repair_warp_kernel<<<blocks, kWarpBlock, 0, stream>>>(ws, status, known_count_, known_q_, known_r_, open_,
                                                        open_count_);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::lowpoly
