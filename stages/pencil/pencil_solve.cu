// Lu's beta by Chronopoulos-Gear CG with the Chebyshev preconditioner
// (pencil_solve.h) in one cooperative kernel: the whole iteration loop runs on
// the device with ONE grid sync per iteration, so there is no per-iteration
// launch or host readback and the solve stops exactly at its residual.
//
// One iteration is one pass over 32x16 tiles. A block loads w, s, r over its
// tile plus a halo of kChebyshevSteps pixels, updates s = w + beta s and
// r -= alpha s there, evaluates u = M r in shared memory (each Chebyshev step
// needs the previous one at the neighbours, so the valid region shrinks by a
// pixel a step, down to the 1-pixel halo that w = A u needs), and writes its
// tile's p, x, s, r, u, w. The halo's r is recomputed from the neighbours'
// w, s, r instead of exchanged, which is what saves the second grid sync.
//
// Reductions are deterministic: each block writes a partial, and every block
// sums the partials in the same order. Data written by other blocks is read
// with __ldcg (L2), never from a possibly stale L1 line.
#include <cooperative_groups.h>

#include <algorithm>

#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cuda.h"

namespace cg = cooperative_groups;

namespace sp::pencil::gpu {

namespace {

constexpr int kCgThreads = 256;
constexpr int kCgWarps = kCgThreads / 32;
constexpr int kTileW = 32, kTileH = 16;
constexpr int kHalo = kChebyshevSteps;  // r is needed this far out; u one pixel less, w only on the tile
constexpr int kExtW = kTileW + 2 * kHalo, kExtH = kTileH + 2 * kHalo, kExt = kExtW * kExtH;

// ln H of every texel level, staged in shared memory once per block.
__device__ float* shared_ln_h() {
  __shared__ float table[kLevels];
  return table;
}

__device__ float pixel_ln_h(const CgArgs& a, int i) { return shared_ln_h()[a.texel_of_pixel[i]]; }

// (A v) at (x, y), v read at index i and its neighbours i +- 1, i +- stride
// (the frame's or the shared tile's row); the operation order is the CPU's
// (pencil_solve_cpu.cpp). Neumann borders: no neighbour past the frame edge.
template <class Field>
__device__ float apply_system(const CgArgs& a, float ln_h, int neighbours, int i, int stride, int x, int y,
                              Field v) {
  const float c = v(i);
  float n = 0;
  if (x > 0) n += v(i - 1);
  if (x + 1 < a.in.width) n += v(i + 1);
  if (y > 0) n += v(i - stride);
  if (y + 1 < a.in.height) n += v(i + stride);
  return ln_h * ln_h * c + a.lambda * (float(neighbours) * c - n);
}

// Every pixel once, grid-stride over tiles (uniform per block).
template <class Fn>
__device__ void for_pixels(int w, int h, Fn fn) {
  const int tiles_x = (w + kTileW - 1) / kTileW, tiles = tiles_x * ((h + kTileH - 1) / kTileH);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int tx0 = (t % tiles_x) * kTileW, ty0 = (t / tiles_x) * kTileH;
    for (int e = threadIdx.x; e < kTileW * kTileH; e += kCgThreads) {
      const int x = tx0 + e % kTileW, y = ty0 + e / kTileW;
      if (x < w && y < h) fn(y * w + x, x, y);
    }
  }
}

// Block sums of kSolveSums values into partials[blockIdx.x * kSolveSums + k].
__device__ void block_partials(const double (&v)[kSolveSums], double* partials) {
  __shared__ double warp_sums[kCgWarps][kSolveSums];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int k = 0; k < kSolveSums; ++k) {
    double s = v[k];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xFFFFFFFFu, s, off);
    if (lane == 0) warp_sums[warp][k] = s;
  }
  __syncthreads();
  if (threadIdx.x < kSolveSums) {
    double s = 0;
    for (int wi = 0; wi < kCgWarps; ++wi) s += warp_sums[wi][threadIdx.x];
    partials[blockIdx.x * kSolveSums + threadIdx.x] = s;
  }
  __syncthreads();
}

// Grid totals after a grid sync: every block adds the partials in one fixed
// order. Each warp loads its share of the partials with all loads in flight
// (8 per lane), then lanes and warps are combined in a fixed order.
constexpr int kPartialsPerLane = 8;
__device__ void grid_totals(const double* partials, double (&out)[kSolveSums]) {
  __shared__ double warp_totals[kCgWarps][kSolveSums];
  __shared__ double totals[kSolveSums];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int k = 0; k < kSolveSums; ++k) {
    double s = 0;
    for (int b0 = threadIdx.x; b0 < gridDim.x; b0 += kCgThreads * kPartialsPerLane) {
      double v[kPartialsPerLane];
#pragma unroll
      for (int j = 0; j < kPartialsPerLane; ++j) {
        const int b = b0 + j * kCgThreads;
        v[j] = b < gridDim.x ? __ldcg(&partials[b * kSolveSums + k]) : 0.0;
      }
#pragma unroll
      for (int j = 0; j < kPartialsPerLane; ++j) s += v[j];
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xFFFFFFFFu, s, off);
    if (lane == 0) warp_totals[warp][k] = s;
  }
  __syncthreads();
  if (threadIdx.x < kSolveSums) {
    double s = 0;
    for (int wi = 0; wi < kCgWarps; ++wi) s += warp_totals[wi][threadIdx.x];
    totals[threadIdx.x] = s;
  }
  __syncthreads();
  for (int k = 0; k < kSolveSums; ++k) out[k] = totals[k];
  __syncthreads();
}

// Shared fields over the extended tile (tile + kHalo on every side).
struct ExtTile {
  float r[kExt];
  float ln_h[kExt];
  float u[2][kExt];  // Chebyshev ping-pong: a step reads one at the neighbours, writes the other
  float d[kExt];
};
__device__ ExtTile& ext_tile() {
  __shared__ ExtTile tile;
  return tile;
}

// What one pass does before the preconditioner. The setup pass only
// preconditions the residual it is given; iteration k first steps x and r.
struct Step {
  int k = -1;  // -1: setup (u = M r, w = A u on r[0])
  float alpha = 0, beta = 0;
};

// One tile of a pass: r (updated by the step) over the extended tile, u = M r,
// w = A u; accumulates (r, u), (w, u), (r, r) of the tile into sums.
__device__ void precondition_tile(const CgArgs& a, const Step& st, int tx0, int ty0, double (&sums)[kSolveSums]) {
  ExtTile& t = ext_tile();
  const int w = a.in.width, h = a.in.height;
  const int in_set = st.k < 0 ? 0 : st.k & 1, out_set = st.k < 0 ? 0 : in_set ^ 1;
  const bool first = st.k <= 0;
  // Load and step r over the extended tile; the tile's own pixels also step
  // p, x and store s, r (the halo's belong to other tiles).
  for (int e = threadIdx.x; e < kExt; e += kCgThreads) {
    const int ex = e % kExtW, ey = e / kExtW, x = tx0 - kHalo + ex, y = ty0 - kHalo + ey;
    if (x < 0 || x >= w || y < 0 || y >= h) continue;  // never read: the stencil stops at the frame edge
    const int i = y * w + x;
    const float ln_h = pixel_ln_h(a, i);
    float r = __ldcg(&a.r[in_set][i]);
    const bool own = ex >= kHalo && ex < kHalo + kTileW && ey >= kHalo && ey < kHalo + kTileH;
    if (st.k >= 0) {
      const float wv = __ldcg(&a.w[in_set][i]);
      const float ap = first ? wv : wv + st.beta * __ldcg(&a.s[in_set][i]);
      r = r - st.alpha * ap;
      if (own) {
        const float p = first ? a.u[i] : a.u[i] + st.beta * a.p[i];
        a.p[i] = p;
        a.x[i] += st.alpha * p;
        a.s[out_set][i] = ap;
        a.r[out_set][i] = r;
      }
    }
    t.r[e] = r;
    t.ln_h[e] = ln_h;
    const ChebyshevState c =
        chebyshev_first(r, system_diagonal(ln_h, neighbour_count(x, y, w, h), a.lambda), a.chebyshev.first);
    t.u[0][e] = c.u;
    t.d[e] = c.d;
  }
  __syncthreads();
  // Chebyshev step j is valid kHalo - j pixels out.
  for (int j = 1; j < kChebyshevSteps; ++j) {
    const int margin = j;  // cells of the extended tile left out on each side
    const int span_w = kExtW - 2 * margin, span = span_w * (kExtH - 2 * margin);
    const float* u_in = t.u[(j - 1) & 1];
    float* u_out = t.u[j & 1];
    for (int c = threadIdx.x; c < span; c += kCgThreads) {
      const int ex = margin + c % span_w, ey = margin + c / span_w, x = tx0 - kHalo + ex, y = ty0 - kHalo + ey;
      if (x < 0 || x >= w || y < 0 || y >= h) continue;
      const int e = ey * kExtW + ex, neighbours = neighbour_count(x, y, w, h);
      const float a_u = apply_system(a, t.ln_h[e], neighbours, e, kExtW, x, y, [&](int n) { return u_in[n]; });
      const ChebyshevState next =
          chebyshev_step({u_in[e], t.d[e]}, t.r[e], a_u, system_diagonal(t.ln_h[e], neighbours, a.lambda),
                         a.chebyshev.keep[j], a.chebyshev.push[j]);
      u_out[e] = next.u;
      t.d[e] = next.d;
    }
    __syncthreads();
  }
  // w = A u on the tile; u and w to memory for the next iteration.
  const float* u_last = t.u[(kChebyshevSteps - 1) & 1];
  for (int c = threadIdx.x; c < kTileW * kTileH; c += kCgThreads) {
    const int x = tx0 + c % kTileW, y = ty0 + c / kTileW;
    if (x >= w || y >= h) continue;
    const int e = (y - ty0 + kHalo) * kExtW + (x - tx0 + kHalo), i = y * w + x;
    const float u = u_last[e], r = t.r[e];
    const float wv = apply_system(a, t.ln_h[e], neighbour_count(x, y, w, h), e, kExtW, x, y,
                                  [&](int n) { return u_last[n]; });
    a.u[i] = u;
    a.w[out_set][i] = wv;
    sums[0] += double(r) * u;
    sums[1] += double(wv) * u;
    sums[2] += double(r) * r;
  }
  __syncthreads();  // the next tile overwrites the shared fields
}

// One pass over every tile, then its reduction: the totals (r, u), (w, u), (r, r).
__device__ void pass(const CgArgs& a, const Step& st, double* partials, double (&totals)[kSolveSums]) {
  cg::grid_group grid = cg::this_grid();
  const int w = a.in.width, h = a.in.height;
  const int tiles_x = (w + kTileW - 1) / kTileW, tiles = tiles_x * ((h + kTileH - 1) / kTileH);
  double sums[kSolveSums] = {0, 0, 0};
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x)
    precondition_tile(a, st, (tile % tiles_x) * kTileW, (tile / tiles_x) * kTileH, sums);
  block_partials(sums, partials);
  grid.sync();
  grid_totals(partials, totals);
}

__global__ void __launch_bounds__(kCgThreads) cg_kernel(CgArgs a) {
  cg::grid_group grid = cg::this_grid();
  const int w = a.in.width, h = a.in.height;
  for (int i = threadIdx.x; i < kLevels; i += blockDim.x) shared_ln_h()[i] = a.ln_h_table[i];
  __syncthreads();
  // Partials alternate between two buffers: a block writes buffer X only after
  // the next grid sync, when every block has finished reading X.
  double* partials[2] = {a.partials, a.partials + size_t(gridDim.x) * kSolveSums};
  int use = 0;
  double totals[kSolveSums];

  if (!a.warm) for_pixels(w, h, [&](int i, int, int) { a.x[i] = 0.f; });
  grid.sync();
  // r = b - A x0 into set 0; b.b.
  double sums[kSolveSums] = {0, 0, 0};
  for_pixels(w, h, [&](int i, int x, int y) {
    const float ln_h = pixel_ln_h(a, i);
    const float rhs = ln_h * a.ln_j[luma8_rgba(a.in.row32(y)[x])];
    const float ax =
        apply_system(a, ln_h, neighbour_count(x, y, w, h), i, w, x, y, [&](int j) { return __ldcg(&a.x[j]); });
    a.r[0][i] = rhs - ax;
    sums[0] += double(rhs) * rhs;
  });
  block_partials(sums, partials[use]);
  grid.sync();
  grid_totals(partials[use], totals);
  use ^= 1;
  const double bb = totals[0];
  double rr = 0;
  int iterations = 0;
  if (bb <= 0) {
    for_pixels(w, h, [&](int i, int, int) { a.x[i] = 0.f; });
  } else {
    const double target = a.tolerance * a.tolerance * bb;
    pass(a, Step{}, partials[use], totals);
    use ^= 1;
    rr = totals[2];
    CgScalars scalars;
    bool usable = rr > target && scalars.next(totals[0], totals[1], true);
    // Uniform: every block holds the same totals, so all leave together.
    for (int k = 0; usable && k < a.max_iterations; ++k) {
      pass(a, Step{k, float(scalars.alpha), float(scalars.beta)}, partials[use], totals);
      use ^= 1;
      rr = totals[2];
      iterations = k + 1;
      usable = rr > target && scalars.next(totals[0], totals[1], false);
    }
  }
  // The solution is x; the caller reads it after the kernel.
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
