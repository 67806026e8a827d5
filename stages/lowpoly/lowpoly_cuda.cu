// CUDA backend of the lowpoly stage. Everything runs on the device: edges,
// vertex selection, compaction, the exact Delaunay mesh (GpuMesh: the star
// construction, certified on the device) and shading. A host function on the
// stream is the safety net: when the device mesh is not certified (never seen
// on real input) it triangulates the frame's vertices on the host, and a kernel
// adopts that mesh through mapped memory, so the frame is still exact and
// process_cuda never blocks the calling thread (counter mesh_fallbacks).
// All arithmetic is shared with the CPU (lowpoly_math.h, lowpoly_star.h).
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "pipeline/cuda_check.h"
#include "pipeline/errors.h"
#include "stages/lowpoly/lowpoly_cuda_state.h"

namespace sp::lowpoly {

namespace {

constexpr int kBlockW = 32, kBlockH = 8;
constexpr int kWarpsPerBlock = 8;

__global__ void luma_kernel(RgbaView in, uint8_t* luma) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  luma[size_t(y) * in.width + x] = uint8_t(luma_of(in.row32(y)[x]));
}

// Edge map plus the sum of the interior pixels' selection weights.
__global__ void edge_kernel(const uint8_t* luma, int w, int h, uint32_t edge_weight_q16, uint8_t* edge,
                            unsigned long long* weight_sum) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  unsigned long long weight = 0;
  if (x < w && y < h) {
    const int e = sobel_edge(luma, w, h, x, y);
    edge[size_t(y) * w + x] = uint8_t(e);
    if (x > 0 && y > 0) weight = point_weight(e, edge_weight_q16);
  }
  for (int o = 16; o > 0; o >>= 1) weight += __shfl_down_sync(0xFFFFFFFFu, weight, o);
  __shared__ unsigned long long warp_sums[kBlockH];
  if (threadIdx.x == 0) warp_sums[threadIdx.y] = weight;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    unsigned long long s = 0;
    for (int i = 0; i < kBlockH; ++i) s += warp_sums[i];
    if (s) atomicAdd(weight_sum, s);  // integer: the total does not depend on the order
  }
}

// The arguments of tile_refresh_due that are the same for every tile.
struct TileRefresh {
  uint64_t seed = 0;
  double period = 0, previous_time = 0, time = 0;
};

// One block of 32 x 8 threads per tile: the tile's edge sum against its reference.
__global__ void tile_kernel(const uint8_t* edge, int w, int h, int tiles_x, uint64_t threshold_q8, bool first,
                            TileRefresh refresh, uint32_t* tile_ref, uint8_t* changed_out) {
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  const int x = x0 + threadIdx.x;
  uint32_t sum = 0;
  for (int y = y0 + threadIdx.y; y < y0 + kTile && y < h; y += kBlockH)
    if (x < w) sum += edge[size_t(y) * w + x];
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xFFFFFFFFu, sum, o);
  __shared__ uint32_t warp_sums[kBlockH];
  if (threadIdx.x == 0) warp_sums[threadIdx.y] = sum;
  __syncthreads();
  if (threadIdx.x != 0 || threadIdx.y != 0) return;
  uint32_t total = 0;
  for (int i = 0; i < kBlockH; ++i) total += warp_sums[i];
  const size_t tile = size_t(blockIdx.y) * tiles_x + blockIdx.x;
  const uint32_t pixels = uint32_t(min(kTile, w - x0) * min(kTile, h - y0));
  const bool changed = first || tile_changed(total, tile_ref[tile], pixels, threshold_q8) ||
                       tile_refresh_due(blockIdx.x, blockIdx.y, refresh.seed, refresh.period, refresh.previous_time,
                                        refresh.time);
  changed_out[tile] = changed;
  if (changed) tile_ref[tile] = total;
}

__global__ void select_kernel(const uint8_t* edge, int w, int h, uint32_t edge_weight_q16, uint64_t seed,
                              int64_t expected, const unsigned long long* weight_sum, const uint8_t* tile_changed,
                              int tiles_x, bool keep, uint8_t* flags) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x < 1 || y < 1 || x >= w || y >= h) return;
  if (keep && !tile_changed[size_t(y / kTile) * tiles_x + x / kTile]) return;
  const uint64_t scale = selection_scale(expected, *weight_sum);
  const uint32_t weight = point_weight(edge[size_t(y) * w + x], edge_weight_q16);
  flags[size_t(y) * w + x] = select_point(x, y, seed, weight, scale) ? 1 : 0;
}

// Calls visit(x, y) for this lane's share of the box: its pixels in raster
// order, 32 apart. The lane steps to its next pixel instead of dividing.
template <class Visit>
__device__ void for_lane_pixels(const PixelBox& b, int lane, Visit visit) {
  const int bw = b.x1 - b.x0 + 1;
  if (bw <= 0) return;
  const int dy = 32 / bw, dx = 32 % bw;
  for (int x = b.x0 + lane % bw, y = b.y0 + lane / bw; y <= b.y1;) {
    visit(x, y);
    x += dx, y += dy;
    if (x > b.x1) x -= bw, ++y;
  }
}

// The shading kernels run twice per frame, gated by the device mesh's status:
// on the frame's stream for a certified mesh, after the host's check for the
// host's mesh (see process_cuda). Exactly one of the two does the work.
__device__ bool shade_now(const GpuMeshStatus* status, bool host_mesh) { return (status->failed != 0) == host_mesh; }

// One warp per triangle: lanes stride over the triangle's pixel box, sum the
// pixels it owns (top-left rule), then paint them with the mean. Safe in one
// pass: a warp reads and writes only its own triangle's pixels, and in and out
// are different frames.
__global__ void shade_kernel(const GpuMeshStatus* status, bool host_mesh, const Triangle* tris, const int* count,
                             RgbaView in, bool centroid, RgbaView out, int line_q4, uint32_t line_color) {
  const int lane = threadIdx.x & 31;
  const int t = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (!shade_now(status, host_mesh) || t >= *count) return;
  const Triangle tri = tris[t];
  const PixelBox box = pixel_box(tri, in.width, in.height);
  uint32_t color = 0;
  if (centroid) {
    color = centroid_color(tri, in);
  } else {
    uint32_t lane_sum[4] = {0, 0, 0, 0}, covered = 0;  // a lane sees < 2^23 pixels: no overflow
    for_lane_pixels(box, lane, [&](int x, int y) {
      if (!covers(tri, x, y)) return;
      const uint32_t p = in.row32(y)[x];
      for (int k = 0; k < 4; ++k) lane_sum[k] += (p >> (8 * k)) & 0xFF;
      ++covered;
    });
    uint64_t sum[4] = {lane_sum[0], lane_sum[1], lane_sum[2], lane_sum[3]};
    for (int o = 16; o > 0; o >>= 1) {
      covered += __shfl_xor_sync(0xFFFFFFFFu, covered, o);
      for (int k = 0; k < 4; ++k) sum[k] += __shfl_xor_sync(0xFFFFFFFFu, sum[k], o);
    }
    color = mean_color(sum, covered);
  }
  for_lane_pixels(box, lane, [&](int x, int y) {
    if (covers(tri, x, y))
      out.row32(y)[x] = line_q4 > 0 && on_line(tri, x, y, line_q4, out.width, out.height) ? line_color : color;
  });
}

// The host's mesh replaces the device's when the device's was not certified.
__global__ void adopt_host_mesh_kernel(const GpuMeshStatus* status, const Triangle* host_tris,
                                       const int* host_count, Triangle* tris, int* tri_count) {
  if (status->failed == 0) return;
  const int count = *host_count;
  if (blockIdx.x == 0 && threadIdx.x == 0) *tri_count = count;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < count; t += gridDim.x * blockDim.x) tris[t] = host_tris[t];
}

__global__ void smooth_kernel(const GpuMeshStatus* status, bool host_mesh, RgbaView out, uint16_t* state,
                              uint32_t alpha_q8, bool first) {
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (!shade_now(status, host_mesh) || x >= out.width || y >= out.height) return;
  uint32_t* p = out.row32(y) + x;
  *p = smooth_color(state + 4 * (size_t(y) * out.width + x), *p, alpha_q8, first);
}

}  // namespace

// (LowpolyStage::CudaState: lowpoly_cuda_state.h)

namespace {

// Reads the device mesh's status; only when it is not certified, triangulates
// on the host (the exact sequential/strip path of the CPU backend).
void CUDART_CB check_on_host(void* user) {
  auto* s = static_cast<LowpolyStage::CudaState*>(user);
  const GpuMeshStatus st = *s->h_status;
  s->points = st.points;
  s->dropped = st.dropped;
  s->long_rings = st.long_rings;
  s->tests = double(st.in_circle_tests);
  s->triangles = st.triangles;
  {
    std::lock_guard lock(s->repair_mutex);
    s->repair_stats = st.repair;
  }
  if (st.failed == 0) return;
  try {
    s->mesh->build(*s->plan, s->h_selected, *s->h_count);
    const auto& tris = s->mesh->triangles();
    std::memcpy(s->h_tris, tris.data(), tris.size() * sizeof(Triangle));
    *s->h_tri_count = int(tris.size());
    s->host_ms = s->mesh->build_ms();
    s->triangles = double(tris.size());
    ++s->fallbacks;
  } catch (const std::exception& e) {
    *s->h_tri_count = 0;
    std::lock_guard lock(s->error_mutex);
    s->error = e.what();
  }
}

}  // namespace

// (release_cuda, configure_cuda: lowpoly_cuda_setup.cu)

void LowpolyStage::shade_cuda(const RgbaView& in, const RgbaView& out, bool host_mesh, cudaStream_t stream) {
  CudaState& c = *cuda_;
  const int tri_blocks = int((plan_.max_triangles() + kWarpsPerBlock - 1) / kWarpsPerBlock);
  shade_kernel<<<tri_blocks, 32 * kWarpsPerBlock, 0, stream>>>(c.status, host_mesh, c.tris, c.tri_count, in,
                                                                settings_.fill == Fill::centroid, out, plan_.line_q4,
                                                                plan_.line_color);
  SP_CUDA_CHECK_LAUNCH();
  if (plan_.smoothing_q8 > 0) {
    const dim3 block(kBlockW, kBlockH), grid((out.width + kBlockW - 1) / kBlockW, (out.height + kBlockH - 1) / kBlockH);
    smooth_kernel<<<grid, block, 0, stream>>>(c.status, host_mesh, out, c.smooth, plan_.smoothing_q8, !have_history_);
    SP_CUDA_CHECK_LAUNCH();
  }
}

void LowpolyStage::process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream) {
  if (in.size() != Size{plan_.width, plan_.height} || out.size() != in.size())
    throw Error(ExitCode::internal, "stage 'lowpoly': frame size differs from the configured size");
  CudaState& c = *cuda_;
  {
    std::lock_guard lock(c.error_mutex);
    if (!c.error.empty()) throw Error(ExitCode::internal, "stage 'lowpoly': " + c.error);
  }
  const int w = plan_.width, h = plan_.height;
  const size_t pixels = size_t(w) * h;
  const dim3 block(kBlockW, kBlockH), grid((w + kBlockW - 1) / kBlockW, (h + kBlockH - 1) / kBlockH);
  SP_CUDA_CHECK(cudaEventRecord(c.marks[kStart], stream));
  SP_CUDA_CHECK(cudaMemsetAsync(c.weight_sum, 0, sizeof(unsigned long long), stream));
  luma_kernel<<<grid, block, 0, stream>>>(in, c.luma);
  SP_CUDA_CHECK_LAUNCH();
  edge_kernel<<<grid, block, 0, stream>>>(c.luma, w, h, plan_.edge_weight_q16, c.edge, c.weight_sum);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cudaEventRecord(c.marks[kEdges], stream));
  const bool keep = settings_.temporal && have_history_;
  if (settings_.temporal) {
    tile_kernel<<<dim3(plan_.tiles_x, plan_.tiles_y), block, 0, stream>>>(
        c.edge, w, h, plan_.tiles_x, plan_.tile_threshold_q8, !have_history_,
        TileRefresh{plan_.seed, settings_.refresh_seconds, last_time_, frame.time_seconds}, c.tile_ref, c.tile_changed);
    SP_CUDA_CHECK_LAUNCH();
  }
  select_kernel<<<grid, block, 0, stream>>>(c.edge, w, h, plan_.edge_weight_q16, plan_.seed, plan_.expected_points,
                                            c.weight_sum, c.tile_changed, plan_.tiles_x, keep, c.flags);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cub::DeviceSelect::Flagged(c.cub_temp, c.cub_temp_bytes, thrust::counting_iterator<int32_t>(0),
                                           c.flags, c.selected, c.num_selected, int(pixels), stream));
  SP_CUDA_CHECK(cudaEventRecord(c.marks[kPoints], stream));
  if (settings_.mesh == MeshRoute::squares) {
    // The issue's route: vertices + grid, 1+JFA+2 labels, 2x2-square triangles (CUB scan), certification and
    // repair of the rings, then the same scan, write and certification of the triangles as the star route.
    c.gpu_mesh.build_grid(c.selected, c.num_selected, c.status, stream);
    SP_CUDA_CHECK(cudaEventRecord(c.marks[kGrid], stream));
    c.voronoi.build_squares(c.gpu_mesh.rings(c.status), c.square_stats, stream, c.squares_marks);
    c.repair.run(c.gpu_mesh.workspace(), c.voronoi.square_tris(), c.voronoi.square_total(),
                 c.voronoi.square_capacity(), c.status, stream, &c.squares_marks[2]);
    SP_CUDA_CHECK(cudaEventRecord(c.marks[kStar], stream));
    c.gpu_mesh.emit(c.tris, c.tri_count, c.status, stream, force_fallback_);
    SP_CUDA_CHECK(cudaEventRecord(c.marks[kEmit], stream));
  } else {
    c.gpu_mesh.build(c.selected, c.num_selected, c.tris, c.tri_count, c.status, stream, &c.marks[kGrid],
                     force_fallback_);
  }
  // The host checks the mesh on a side stream while the frame's stream shades the device mesh. Only an uncertified
  // mesh (rare) makes the side stream adopt the host's mesh and shade it; the frame waits for both.
  SP_CUDA_CHECK(cudaStreamWaitEvent(c.check_stream, c.marks[kEmit]));
  // The vertices go down too (about 40 KB at 1080p), for the host in case it must step in.
  SP_CUDA_CHECK(cudaMemcpyAsync(c.h_count, c.num_selected, sizeof(int), cudaMemcpyDeviceToHost, c.check_stream));
  SP_CUDA_CHECK(cudaMemcpyAsync(c.h_selected, c.selected, sizeof(int32_t) * plan_.capacity, cudaMemcpyDeviceToHost,
                                c.check_stream));
  SP_CUDA_CHECK(cudaMemcpyAsync(c.h_status, c.status, sizeof(GpuMeshStatus), cudaMemcpyDeviceToHost, c.check_stream));
  SP_CUDA_CHECK(cudaLaunchHostFunc(c.check_stream, check_on_host, &c));
  SP_CUDA_CHECK(cudaEventRecord(c.marks[kHostChecked], c.check_stream));
  shade_cuda(in, out, false, stream);
  SP_CUDA_CHECK(cudaEventRecord(c.marks[kShaded], stream));
  SP_CUDA_CHECK(cudaStreamWaitEvent(c.check_stream, c.marks[kShaded]));
  adopt_host_mesh_kernel<<<64, 256, 0, c.check_stream>>>(c.status, c.d_host_tris, c.d_host_tri_count, c.tris,
                                                          c.tri_count);
  SP_CUDA_CHECK_LAUNCH();
  shade_cuda(in, out, true, c.check_stream);
  SP_CUDA_CHECK(cudaEventRecord(c.marks[kAdopted], c.check_stream));
  SP_CUDA_CHECK(cudaStreamWaitEvent(stream, c.marks[kAdopted]));
  SP_CUDA_CHECK(cudaEventRecord(c.marks[kDone], stream));
  if (settings_.voronoi_check) {  // after the frame's own work, so the stage's phases stay comparable
    SP_CUDA_CHECK(cudaEventRecord(c.voronoi_marks[0], stream));
    if (settings_.mesh == MeshRoute::squares) {  // the labels and squares are this frame's already
      for (int i = 1; i <= 2; ++i) SP_CUDA_CHECK(cudaEventRecord(c.voronoi_marks[i], stream));
      c.voronoi.compare(c.gpu_mesh.rings(c.status), c.square_stats, stream);
      SP_CUDA_CHECK(cudaEventRecord(c.voronoi_marks[3], stream));
    } else {
      c.voronoi.run(c.gpu_mesh.rings(c.status), c.square_stats, stream, &c.voronoi_marks[1]);
    }
    SP_CUDA_CHECK(cudaMemcpyAsync(c.h_square_stats, c.square_stats, sizeof(SquareStats), cudaMemcpyDeviceToHost,
                                  stream));
    SP_CUDA_CHECK(cudaEventRecord(c.voronoi_marks[4], stream));
  }
  c.recorded = true;
  have_history_ = true;
  last_time_ = frame.time_seconds;
}

}  // namespace sp::lowpoly
