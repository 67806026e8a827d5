// Tone branch on CUDA (luma histogram, EMA + histogram matching) and the final
// combination R = S * T^gamma_i.
#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cuda.h"

namespace sp::pencil::gpu {

namespace {

constexpr int kHistogramThreads = 256;
constexpr int kHistogramRowsPerBlock = 4;  // ~270 blocks at 1080p: every SM busy

__global__ void histogram_kernel(RgbaView in, uint32_t* counts) {
  __shared__ uint32_t local[kLevels];
  for (int i = threadIdx.x; i < kLevels; i += blockDim.x) local[i] = 0;
  __syncthreads();
  const int y0 = blockIdx.x * kHistogramRowsPerBlock;
  const int y1 = min(in.height, y0 + kHistogramRowsPerBlock);
  for (int y = y0; y < y1; ++y) {
    const uint32_t* row = in.row32(y);
    for (int x = threadIdx.x; x < in.width; x += blockDim.x) atomicAdd(&local[luma8_rgba(row[x])], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kLevels; i += blockDim.x)
    if (local[i]) atomicAdd(&counts[i], local[i]);
}

// One block of 256 threads: the same double arithmetic as cpu::tone_levels.
__global__ void tone_levels_kernel(const uint32_t* counts, double pixels, double ema_factor, int have_history,
                                   double* ema, const double* target_cdf, const float* ln_level, float* ln_j) {
  __shared__ double source_cdf[kLevels];
  const int g = threadIdx.x;
  update_source_histogram(counts, pixels, ema_factor, have_history != 0, ema, g);
  __syncthreads();
  if (g == 0) cumulate(ema, source_cdf);  // fixed order, as on the CPU
  __syncthreads();
  ln_j[g] = ln_level[match_level(source_cdf, target_cdf, g)];
}

__global__ void combine_kernel(RgbaView in, RgbaView out, CombineArgs a) {
  __shared__ float ln_j[kLevels], ln_h[kLevels];
  __shared__ double smoothed[2];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  if (tid == 0) {
    // Every block derives the same smoothed range; one block stores it for the next frame.
    smooth_stroke_range(a.range_state + 2 * a.parity, ~a.range[0], a.range[1], a.ema_factor, a.have_history != 0,
                        smoothed);
    if (blockIdx.x == 0 && blockIdx.y == 0) {
      a.range_state[2 * (a.parity ^ 1)] = smoothed[0];
      a.range_state[2 * (a.parity ^ 1) + 1] = smoothed[1];
    }
  }
  for (int i = tid; i < kLevels; i += blockDim.x * blockDim.y) {
    ln_j[i] = a.ln_j[i];
    ln_h[i] = a.ln_h_table[i];
  }
  __syncthreads();
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  const float sp_lo = float(smoothed[0]), sp_hi = float(smoothed[1]);
  const size_t i = size_t(y) * in.width + x;
  const uint32_t px = in.row32(y)[x];
  const float lj = ln_j[luma8_rgba(px)];
  const float beta = a.beta ? a.beta[i] : mul_rn(a.fast_beta_scale, lj);
  const float lh = ln_h[a.texel_of_pixel[i]];
  const float s = stroke_value(a.sp[i], sp_lo, sp_hi, a.gamma_s);
  const float t = texture_value(beta, lh, a.gamma_i);
  out.row32(y)[x] = output_pixel(px, mul_rn(s, t), a.color);
}

}  // namespace

void launch_histogram(const RgbaView& in, uint32_t* counts, cudaStream_t stream) {
  const int blocks = (in.height + kHistogramRowsPerBlock - 1) / kHistogramRowsPerBlock;
  histogram_kernel<<<blocks, kHistogramThreads, 0, stream>>>(in, counts);
  SP_CUDA_CHECK_LAUNCH();
}

void launch_tone_levels(const uint32_t* counts, double pixels, double ema_factor, bool have_history, double* ema,
                        const double* target_cdf, const float* ln_level, float* ln_j, cudaStream_t stream) {
  tone_levels_kernel<<<1, kLevels, 0, stream>>>(counts, pixels, ema_factor, have_history ? 1 : 0, ema, target_cdf,
                                                ln_level, ln_j);
  SP_CUDA_CHECK_LAUNCH();
}

void launch_combine(const RgbaView& in, const RgbaView& out, const CombineArgs& a, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((in.width + block.x - 1) / block.x, (in.height + block.y - 1) / block.y);
  combine_kernel<<<grid, block, 0, stream>>>(in, out, a);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::pencil::gpu
