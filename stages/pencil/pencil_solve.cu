// Lu's beta by Jacobi-preconditioned CG in one cooperative kernel: the whole
// iteration loop runs on the device (grid-wide syncs between the two passes
// of an iteration), so there is no per-iteration launch or host readback and
// the solve stops exactly at its residual. Reductions are deterministic: each
// block writes a partial, and every block sums the partials in the same order.
// Data written by other blocks is read with __ldcg (L2), never from a possibly
// stale L1 line.
#include <cooperative_groups.h>

#include <algorithm>

#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cuda.h"

namespace cg = cooperative_groups;

namespace sp::pencil::gpu {

namespace {

constexpr int kCgThreads = 256;
constexpr int kCgWarps = kCgThreads / 32;
constexpr int kSums = 3;  // partial slots per block

struct Terms {
  float ln_h;
  float diagonal;
  int neighbours;
};

// ln H of every texel level, staged in shared memory once per block.
__device__ float* shared_ln_h() {
  __shared__ float table[kLevels];
  return table;
}

__device__ Terms pixel_terms(const CgArgs& a, int i, int x, int y) {
  Terms t;
  t.ln_h = shared_ln_h()[a.texel_of_pixel[i]];
  t.neighbours = neighbour_count(x, y, a.in.width, a.in.height);
  t.diagonal = system_diagonal(t.ln_h, t.neighbours, a.lambda);
  return t;
}

constexpr int kHaloTileW = 32 + 2, kHaloTileH = 8 + 2;
__device__ float* halo_tile() {
  __shared__ float tile[kHaloTileW * kHaloTileH];
  return tile;
}

// Every 32x8 tile once (grid-stride; uniform per block, so fn may sync).
template <class Fn>
__device__ void for_tiles(int w, int h, Fn fn) {
  const int tiles_x = (w + 31) / 32, tiles = tiles_x * ((h + 7) / 8);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) fn((t % tiles_x) * 32, (t / tiles_x) * 8);
}

// Every pixel once, grid-stride over 32x8 tiles: neighbours share cache
// lines, and x, y come without a division per pixel.
template <class Fn>
__device__ void for_pixels(int w, int h, Fn fn) {
  const int tiles_x = (w + 31) / 32, tiles = tiles_x * ((h + 7) / 8);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int x = (t % tiles_x) * 32 + int(threadIdx.x & 31), y = (t / tiles_x) * 8 + int(threadIdx.x >> 5);
    if (x < w && y < h) fn(y * w + x, x, y);
  }
}

// for_pixels with kBatch pixels per thread in flight: all loads of a batch
// (`load`) are issued before any store (`update`), so a thread waits for one
// memory latency per batch instead of one per pixel. Pixels are updated in
// for_pixels' order, so per-thread sums add up exactly as there.
constexpr int kBatch = 4;
struct Update {
  float x, p, r, q, diagonal;
};
template <class Load, class Store>
__device__ void for_pixel_batches(int w, int h, Load load, Store update) {
  const int tiles_x = (w + 31) / 32, tiles = tiles_x * ((h + 7) / 8);
  for (int t0 = blockIdx.x; t0 < tiles; t0 += kBatch * gridDim.x) {
    Update u[kBatch];
    int index[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int t = t0 + j * gridDim.x;
      const int x = (t % tiles_x) * 32 + int(threadIdx.x & 31), y = (t / tiles_x) * 8 + int(threadIdx.x >> 5);
      index[j] = t < tiles && x < w && y < h ? y * w + x : -1;
      if (index[j] >= 0) load(index[j], x, y, u[j]);
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j)
      if (index[j] >= 0) update(index[j], u[j]);
  }
}

template <class Field>
__device__ float apply_system(const CgArgs& a, const Terms& t, int i, int x, int y, Field v) {
  const int w = a.in.width, h = a.in.height;
  const float c = v(i, x, y);
  float n = 0;
  if (x > 0) n += v(i - 1, x - 1, y);
  if (x + 1 < w) n += v(i + 1, x + 1, y);
  if (y > 0) n += v(i - w, x, y - 1);
  if (y + 1 < h) n += v(i + w, x, y + 1);
  return t.ln_h * t.ln_h * c + a.lambda * (float(t.neighbours) * c - n);
}

// Block sums of up to kSums values into partials[blockIdx.x * kSums + k].
__device__ void block_partials(double (&v)[kSums], int count, double* partials) {
  __shared__ double warp_sums[kCgWarps][kSums];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int k = 0; k < count; ++k) {
    double s = v[k];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xFFFFFFFFu, s, off);
    if (lane == 0) warp_sums[warp][k] = s;
  }
  __syncthreads();
  if (threadIdx.x < count) {
    double s = 0;
    for (int wi = 0; wi < kCgWarps; ++wi) s += warp_sums[wi][threadIdx.x];
    partials[blockIdx.x * kSums + threadIdx.x] = s;
  }
  __syncthreads();
}

// Grid totals after a grid sync: every block adds the partials in one fixed
// order. Each warp loads its share of the partials with all loads in flight
// (8 per lane), then lanes and warps are combined in a fixed order.
constexpr int kPartialsPerLane = 8;
__device__ void grid_totals(const double* partials, int count, double (&out)[kSums]) {
  __shared__ double warp_totals[kCgWarps][kSums];
  __shared__ double totals[kSums];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int k = 0; k < count; ++k) {
    double s = 0;
    for (int b0 = threadIdx.x; b0 < gridDim.x; b0 += kCgThreads * kPartialsPerLane) {
      double v[kPartialsPerLane];
#pragma unroll
      for (int j = 0; j < kPartialsPerLane; ++j) {
        const int b = b0 + j * kCgThreads;
        v[j] = b < gridDim.x ? __ldcg(&partials[b * kSums + k]) : 0.0;
      }
#pragma unroll
      for (int j = 0; j < kPartialsPerLane; ++j) s += v[j];
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xFFFFFFFFu, s, off);
    if (lane == 0) warp_totals[warp][k] = s;
  }
  __syncthreads();
  if (threadIdx.x < count) {
    double s = 0;
    for (int wi = 0; wi < kCgWarps; ++wi) s += warp_totals[wi][threadIdx.x];
    totals[threadIdx.x] = s;
  }
  __syncthreads();
  for (int k = 0; k < count; ++k) out[k] = totals[k];
  __syncthreads();
}

__global__ void __launch_bounds__(kCgThreads) cg_kernel(CgArgs a) {
  cg::grid_group grid = cg::this_grid();
  const int w = a.in.width, h = a.in.height;
  for (int i = threadIdx.x; i < kLevels; i += blockDim.x) shared_ln_h()[i] = a.ln_h_table[i];
  __syncthreads();
  // Partials alternate between two buffers: a block writes buffer X only after
  // the next grid sync, when every block has finished reading X.
  double* partials[2] = {a.partials, a.partials + size_t(gridDim.x) * kSums};
  int use = 0;
  double sums[kSums], totals[kSums];

  if (!a.warm) for_pixels(w, h, [&](int i, int, int) { a.x[i] = 0.f; });
  grid.sync();
  sums[0] = sums[1] = sums[2] = 0;
  for_pixels(w, h, [&](int i, int x, int y) {
    const Terms t = pixel_terms(a, i, x, y);
    const float rhs = t.ln_h * a.ln_j[luma8_rgba(a.in.row32(y)[x])];
    const float ax = apply_system(a, t, i, x, y, [&](int j, int, int) { return __ldcg(&a.x[j]); });
    const float r = rhs - ax;
    a.r[i] = r;
    sums[0] += double(rhs) * rhs;
    sums[1] += double(r) * r / t.diagonal;
    sums[2] += double(r) * r;
  });
  block_partials(sums, 3, partials[use]);
  grid.sync();
  grid_totals(partials[use], 3, totals);
  use ^= 1;

  const double bb = totals[0];
  double rz = totals[1], rr = totals[2], rz_prev = 1;
  int iterations = 0;
  if (bb <= 0) {
    for_pixels(w, h, [&](int i, int, int) { a.x[i] = 0.f; });
    rr = 0;
  } else {
    const double target = a.tolerance * a.tolerance * bb;
    for (int k = 0; k < a.max_iterations && rr > target; ++k) {
      const float beta_k = k == 0 ? 0.f : float(rz / rz_prev);
      float* p_new = (k & 1) ? a.p1 : a.p0;
      const float* p_old = (k & 1) ? a.p0 : a.p1;
      auto direction = [&](int j, int x, int y) {
        const float z = __ldcg(&a.r[j]) / pixel_terms(a, j, x, y).diagonal;
        return k == 0 ? z : z + beta_k * __ldcg(&p_old[j]);
      };
      sums[0] = 0;
      // p over the tile and its 1-pixel halo, once into shared memory; q = A p
      // reads the neighbours there (each p from L2 once, not five times).
      for_tiles(w, h, [&](int tx0, int ty0) {
        for (int e = threadIdx.x; e < kHaloTileW * kHaloTileH; e += blockDim.x) {
          const int gx = tx0 - 1 + e % kHaloTileW, gy = ty0 - 1 + e / kHaloTileW;
          halo_tile()[e] = gx >= 0 && gx < w && gy >= 0 && gy < h ? direction(gy * w + gx, gx, gy) : 0.f;
        }
        __syncthreads();
        const int x = tx0 + int(threadIdx.x & 31), y = ty0 + int(threadIdx.x >> 5);
        if (x < w && y < h) {
          const int i = y * w + x;
          auto from_tile = [&](int, int xx, int yy) { return halo_tile()[(yy - ty0 + 1) * kHaloTileW + xx - tx0 + 1]; };
          const Terms t = pixel_terms(a, i, x, y);
          const float p = from_tile(i, x, y);
          const float q = apply_system(a, t, i, x, y, from_tile);
          p_new[i] = p;
          a.q[i] = q;
          sums[0] += double(p) * q;
        }
        __syncthreads();
      });
      block_partials(sums, 1, partials[use]);
      grid.sync();
      grid_totals(partials[use], 1, totals);
      use ^= 1;
      const double pq = totals[0];
      if (!(pq > 0)) break;  // uniform: every block holds the same totals
      const float alpha = float(rz / pq);
      sums[0] = sums[1] = 0;
      for_pixel_batches(w, h, [&](int i, int x, int y, Update& u) {
        u.x = a.x[i], u.p = p_new[i], u.r = a.r[i], u.q = a.q[i];
        u.diagonal = pixel_terms(a, i, x, y).diagonal;
      }, [&](int i, const Update& u) {
        a.x[i] = u.x + alpha * u.p;
        const float r = u.r - alpha * u.q;
        a.r[i] = r;
        sums[0] += double(r) * r / u.diagonal;
        sums[1] += double(r) * r;
      });
      block_partials(sums, 2, partials[use]);
      grid.sync();
      grid_totals(partials[use], 2, totals);
      use ^= 1;
      rz_prev = rz;
      rz = totals[0];
      rr = totals[1];
      iterations = k + 1;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.stats->iterations = iterations;
    a.stats->relative_residual = bb > 0 ? float(sqrt(rr / bb)) : 0.f;
  }
}

}  // namespace

int cg_grid_blocks() {
  int device = 0, sms = 0, cooperative = 0, per_sm = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative) throw Error(ExitCode::unavailable, "pencil: tone_solve lu2012 needs cooperative launch support");
  SP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cg_kernel, kCgThreads, 0));
  // Four blocks (32 warps) per SM keep enough loads in flight to cover the
  // memory latency; more would only lengthen the grid syncs and partial sums.
  return sms * std::max(1, std::min(per_sm, 4));
}

void launch_cg(const CgArgs& a, int blocks, cudaStream_t stream) {
  CgArgs args = a;
  void* params[] = {&args};
  SP_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(cg_kernel), dim3(blocks), dim3(kCgThreads),
                                            params, 0, stream));
}

}  // namespace sp::pencil::gpu
