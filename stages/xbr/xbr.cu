// CUDA xBR: one thread per input pixel computes its whole N x N block in
// registers, so every thread of a warp runs the same instruction stream at
// every scale (the seed's per-output-pixel branching lost efficiency as the
// scale grew). The block's input tile with its 2-pixel halo is loaded once
// into shared memory, with the YUV key of every pixel computed there; the output goes through shared memory so that each warp writes 32
// consecutive words of one output row.
#include "pipeline/cuda_check.h"
#include "stages/xbr/xbr.h"
#include "stages/xbr/xbr_rules.h"

namespace sp {
namespace {

constexpr int kTileW = 32;  // one warp per tile row
constexpr int kTileH = 8;
constexpr int kHalo = 2;
constexpr int kSharedW = kTileW + 2 * kHalo;
constexpr int kSharedH = kTileH + 2 * kHalo;
constexpr int kThreads = kTileW * kTileH;

template <int N, class Rules>
__global__ void __launch_bounds__(kThreads) xbr_kernel(RgbaView in, RgbaView out, Rules rules) {
  __shared__ uint32_t tile_px[kSharedH][kSharedW];
  __shared__ uint32_t tile_key[kSharedH][kSharedW];
  __shared__ __align__(16) uint32_t staged[kTileH * N][kTileW * N];

  const int tid = threadIdx.y * kTileW + threadIdx.x;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  for (int i = tid; i < kSharedW * kSharedH; i += kThreads) {
    const int ty = i / kSharedW, tx = i - ty * kSharedW;
    // Clamp to the edge exactly like FFmpeg's row/column selection.
    const int gy = min(max(y0 + ty - kHalo, 0), in.height - 1);
    const int gx = min(max(x0 + tx - kHalo, 0), in.width - 1);
    const uint32_t p = __ldg(in.row32(gy) + gx);
    tile_px[ty][tx] = p;
    tile_key[ty][tx] = xbr::yuv_key(p);
  }
  __syncthreads();

  xbr::Neighborhood nb;
#pragma unroll
  for (int r = 0; r < 5; ++r) {
#pragma unroll
    for (int c = 0; c < 5; ++c) {
      const bool corner = (r == 0 || r == 4) && (c == 0 || c == 4);
      nb.px[r][c] = corner ? 0u : tile_px[threadIdx.y + r][threadIdx.x + c];
      nb.key[r][c] = corner ? 0u : tile_key[threadIdx.y + r][threadIdx.x + c];
    }
  }
  uint32_t blk[N * N];
  xbr::NoTally no_tally;
  xbr::xbr_expand<N>(nb, rules, blk, no_tally);

  const uint32_t centre = nb.px[2][2];
#pragma unroll
  for (int r = 0; r < N; ++r) {
    uint32_t* row = &staged[threadIdx.y * N + r][threadIdx.x * N];
    // Vector stores keep the stride-N shared writes free of bank conflicts.
    if constexpr (N == 4) {
      *reinterpret_cast<uint4*>(row) =
          make_uint4(xbr::finish_pixel(blk[r * N + 0], centre), xbr::finish_pixel(blk[r * N + 1], centre),
                     xbr::finish_pixel(blk[r * N + 2], centre), xbr::finish_pixel(blk[r * N + 3], centre));
    } else if constexpr (N == 2) {
      *reinterpret_cast<uint2*>(row) =
          make_uint2(xbr::finish_pixel(blk[r * N + 0], centre), xbr::finish_pixel(blk[r * N + 1], centre));
    } else {
#pragma unroll
      for (int c = 0; c < N; ++c) row[c] = xbr::finish_pixel(blk[r * N + c], centre);
    }
  }
  __syncthreads();

  constexpr int kOutW = kTileW * N;
  const int ox0 = x0 * N, oy0 = y0 * N;
#pragma unroll
  for (int i = tid; i < kTileH * N * kOutW; i += kThreads) {
    const int r = i / kOutW, c = i - r * kOutW;
    const int oy = oy0 + r, ox = ox0 + c;
    if (oy < out.height && ox < out.width) out.row32(oy)[ox] = staged[r][c];
  }
}

template <int N, class Rules>
void launch(const RgbaView& in, const RgbaView& out, const Rules& rules, cudaStream_t stream) {
  const dim3 block(kTileW, kTileH);
  const dim3 grid((in.width + kTileW - 1) / kTileW, (in.height + kTileH - 1) / kTileH);
  xbr_kernel<N><<<grid, block, 0, stream>>>(in, out, rules);
  SP_CUDA_CHECK_LAUNCH();
}

template <class Rules>
void launch_scaled(int scale, const RgbaView& in, const RgbaView& out, const Rules& rules, cudaStream_t stream) {
  switch (scale) {
    case 2: launch<2>(in, out, rules, stream); break;
    case 3: launch<3>(in, out, rules, stream); break;
    default: launch<4>(in, out, rules, stream); break;
  }
}

}  // namespace

void xbr_expand_cuda(const RgbaView& in, const RgbaView& out, const XbrSettings& settings, cudaStream_t stream) {
  if (in.width <= 0 || in.height <= 0) return;
  if (settings.mode == XbrMode::threshold)
    launch_scaled(settings.scale, in, out, xbr::ThresholdRules{settings.threshold}, stream);
  else
    launch_scaled(settings.scale, in, out, xbr::ExactRules{}, stream);
}

void XbrStage::process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo&, cudaStream_t stream) {
  xbr_expand_cuda(in, out, settings_, stream);
}

}  // namespace sp
