// Stroke branch on CUDA: median + gradient (one kernel), 8 line responses +
// argmax (one kernel), drawing convolution + sum + frame range (one kernel).
// The line convolutions follow a StrokePlan (pencil_stroke_plan.h): float FMAs
// on integer values, exact, so results equal the CPU's bit for bit.
#include <algorithm>
#include <cmath>
#include <vector>

#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cuda.h"

namespace sp::pencil::gpu {

namespace {

constexpr int kPrepTile = 32;  // median/gradient: 32x32 outputs per block
constexpr int kRun = kPlanRun;
constexpr int kTile = kPlanTile;
constexpr int kStrokeThreads = 256;              // 8 warps: (64 / 32) lanes x (64 / kRun) groups
constexpr int kStrokeBlocksPerSm = 3;           // register cap (85): 24 warps per SM at 1080p's tile size
constexpr int kExchangePitch = kPlanTile + 1;    // odd: conflict-free row and column access

__global__ void median_gradient_kernel(RgbaView in, GradientForm form, uint16_t* gradient) {
  constexpr int kLuma = kPrepTile + 3;    // pixels x0-1 .. x0+33
  constexpr int kMedian = kPrepTile + 1;  // medians x0 .. x0+32 (the gradient looks one ahead)
  __shared__ uint8_t luma[kLuma][kLuma + 1];
  __shared__ uint8_t median[kMedian][kMedian + 3];
  const int w = in.width, h = in.height;
  const int x0 = blockIdx.x * kPrepTile, y0 = blockIdx.y * kPrepTile;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
  for (int i = tid; i < kLuma * kLuma; i += threads) {
    const int ly = i / kLuma, lx = i % kLuma;
    const int gx = iclamp(x0 - 1 + lx, 0, w - 1), gy = iclamp(y0 - 1 + ly, 0, h - 1);  // edges replicated
    luma[ly][lx] = uint8_t(luma8_rgba(in.row32(gy)[gx]));
  }
  __syncthreads();
  for (int i = tid; i < kMedian * kMedian; i += threads) {
    const int my = i / kMedian, mx = i % kMedian;
    median[my][mx] = uint8_t(median9(luma[my][mx], luma[my][mx + 1], luma[my][mx + 2], luma[my + 1][mx],
                                     luma[my + 1][mx + 1], luma[my + 1][mx + 2], luma[my + 2][mx],
                                     luma[my + 2][mx + 1], luma[my + 2][mx + 2]));
  }
  __syncthreads();
  for (int ty = threadIdx.y; ty < kPrepTile; ty += blockDim.y) {
    const int tx = threadIdx.x, x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= h) continue;
    const int c = median[ty][tx];
    const int dx = x + 1 < w ? c - median[ty][tx + 1] : 0;
    const int dy = y + 1 < h ? c - median[ty + 1][tx] : 0;
    gradient[size_t(y) * w + x] = uint16_t(form == GradientForm::l1 ? gradient_l1(dx, dy) : gradient_l2(dx, dy));
  }
}

// The block's tile plus a halo of half_length (zeros outside the frame) as
// floats, row-major or transposed. `value` maps a stored word to its value
// (and 0 to 0). Each thread issues all loads of two tile rows before it stores
// any, so a block waits for one memory latency per 16 rows, not per value.
constexpr int kLoadRowsInFlight = 2;
constexpr int kMaxTileColumnSteps = (kTile + 2 * kMaxHalfLength + 31) / 32;
template <class Store>
__device__ void load_tile_words(const uint16_t* __restrict__ src, int w, int h, int half, Store store) {
  const int side = kTile + 2 * half;
  const int gx0 = blockIdx.x * kTile - half, gy0 = blockIdx.y * kTile - half;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kStrokeThreads / 32;
  for (int ty0 = warp; ty0 < side; ty0 += warps * kLoadRowsInFlight) {
    uint16_t v[kLoadRowsInFlight][kMaxTileColumnSteps];
#pragma unroll
    for (int a = 0; a < kLoadRowsInFlight; ++a) {
      const int gy = gy0 + ty0 + warps * a;
      const bool row_in = ty0 + warps * a < side && gy >= 0 && gy < h;
#pragma unroll
      for (int c = 0; c < kMaxTileColumnSteps; ++c) {
        const int tx = lane + 32 * c, gx = gx0 + tx;
        v[a][c] = row_in && tx < side && gx >= 0 && gx < w ? __ldg(src + size_t(gy) * w + gx) : uint16_t(0);
      }
    }
#pragma unroll
    for (int a = 0; a < kLoadRowsInFlight; ++a) {
      const int ty = ty0 + warps * a;
#pragma unroll
      for (int c = 0; c < kMaxTileColumnSteps; ++c) {
        const int tx = lane + 32 * c;
        if (ty < side && tx < side) store(ty, tx, v[a][c]);
      }
    }
  }
}

template <class Fn>
__device__ void load_tile(const uint16_t* __restrict__ src, int w, int h, int half, int pitch, bool transposed,
                          float* tile, Fn value) {
  load_tile_words(src, w, h, half, [&](int ty, int tx, uint16_t v) {
    tile[transposed ? tx * pitch + ty : ty * pitch + tx] = value(v);
  });
}

// The float tile of direction d's masked gradient from the block's words in shared memory.
__device__ void build_masked_tile(const uint16_t* words, int half, int pitch, bool transposed, int d, float* tile) {
  const int side = kTile + 2 * half;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kStrokeThreads / 32;
  for (int ty = warp; ty < side; ty += warps)
    for (int tx = lane; tx < side; tx += 32)
      tile[transposed ? tx * pitch + ty : ty * pitch + tx] = float(masked_gradient(words[ty * side + tx], d));
}

// kRun FMAs per tap: window of kRun + C - 1 consecutive tile values.
// Plan words live in shared memory when they fit (kShared), else in global memory.
template <bool kShared, class T>
__device__ __forceinline__ T plan_load(const T* at) {
  if constexpr (kShared) return *at;
  else return __ldg(at);
}

template <int C, bool kShared>
__device__ __forceinline__ void chunk_fma(const float* tile, int at, const float* weights, float (&acc)[kRun]) {
  float w[C < 4 ? 4 : C];
  const float4 w0 = plan_load<kShared>(reinterpret_cast<const float4*>(weights));
  w[0] = w0.x, w[1] = w0.y, w[2] = w0.z, w[3] = w0.w;
  if constexpr (C == 8) {
    const float4 w1 = plan_load<kShared>(reinterpret_cast<const float4*>(weights) + 1);
    w[4] = w1.x, w[5] = w1.y, w[6] = w1.z, w[7] = w1.w;
  }
  float window[kRun + C - 1];
#pragma unroll
  for (int i = 0; i < kRun + C - 1; ++i) window[i] = tile[at + i];
#pragma unroll
  for (int j = 0; j < C; ++j)
#pragma unroll
    for (int r = 0; r < kRun; ++r) acc[r] = fmaf(w[j], window[r + j], acc[r]);
}

// A run of `length` equal weights: a sliding box sum along the thread's outputs
// (2 loads and adds per output instead of `length` FMAs). Sums of at most 129
// values <= 511 are exact floats; the product is bounded by the plan's flushes.
__device__ __forceinline__ void box_fma(const float* tile, int at, int length, float weight, float (&acc)[kRun]) {
  float box = 0.f;
  for (int i = 0; i < length; ++i) box += tile[at + i];
#pragma unroll
  for (int r = 0; r < kRun; ++r) {
    acc[r] = fmaf(weight, box, acc[r]);
    if (r + 1 < kRun) box += tile[at + r + length] - tile[at + r];
  }
}

// One direction's response at the thread's kRun outputs (tile index `base` of
// the first), exact: float partials are moved into uint32 at flush marks.
// Records have a fixed stride, so the next header is loaded ahead.
template <bool kShared>
__device__ __forceinline__ void direction_total(const float* tile, int base, const float* plan, int begin, int end,
                                                uint32_t (&total)[kRun]) {
  float acc[kRun];
#pragma unroll
  for (int r = 0; r < kRun; ++r) acc[r] = 0.f, total[r] = 0u;
  int4 head = begin < end ? plan_load<kShared>(reinterpret_cast<const int4*>(plan + begin)) : make_int4(0, 0, 0, 0);
  for (int i = begin; i < end; i += kPlanRecordWords) {
    const int4 next =
        i + kPlanRecordWords < end ? plan_load<kShared>(reinterpret_cast<const int4*>(plan + i + kPlanRecordWords))
                                   : head;
    const float* weights = plan + i + kPlanHeaderWords;
    const int at = base + head.x;
    switch (head.y) {
      case 1: chunk_fma<1, kShared>(tile, at, weights, acc); break;
      case 2: chunk_fma<2, kShared>(tile, at, weights, acc); break;
      case 4: chunk_fma<4, kShared>(tile, at, weights, acc); break;
      case 8: chunk_fma<8, kShared>(tile, at, weights, acc); break;
      default: box_fma(tile, at, -head.y, plan_load<kShared>(weights), acc); break;
    }
    if (head.z) {
#pragma unroll
      for (int r = 0; r < kRun; ++r) total[r] += __float2uint_rz(acc[r]), acc[r] = 0.f;
    }
    head = next;
  }
#pragma unroll
  for (int r = 0; r < kRun; ++r) total[r] += __float2uint_rz(acc[r]);
}

// Shared memory of a stroke block: the tile, the pass exchange, then the plan
// (when it is staged there), then the draw kernel's class words (when there).
__device__ float* shared_after_exchange(const DeviceStrokePlan& p, float* smem) {
  float* after = smem + size_t(kTile + 2 * p.half_length) * p.pitch + kTile * kExchangePitch;
  return after + (4 - (reinterpret_cast<uintptr_t>(after) / sizeof(float)) % 4) % 4;  // 16-byte aligned
}
// Stages the plan; returns the plan pointer to use.
template <bool kShared>
__device__ const float* stage_plan(const DeviceStrokePlan& p, float* smem) {
  if constexpr (!kShared) {
    return p.words;
  } else {
    const int words = p.begin[kDirections];
    float* plan = shared_after_exchange(p, smem);
    for (int i = threadIdx.x; i < words / 4; i += kStrokeThreads)
      reinterpret_cast<float4*>(plan)[i] = __ldg(reinterpret_cast<const float4*>(p.words) + i);
    return plan;  // the first __syncthreads of the kernel publishes it
  }
}

// Thread layout. Row pass: lanes walk rows, each thread kRun columns.
// Column pass (transposed tile): lanes walk columns, each thread kRun rows.
struct Owner {
  int along0, across;  // first output along the thread's run, and the other coordinate
};
__device__ Owner owner() {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  return {kRun * (warp >> 1), 32 * (warp & 1) + lane};
}

template <bool kShared>
__global__ void __launch_bounds__(kStrokeThreads, kStrokeBlocksPerSm) classify_kernel(const uint16_t* __restrict__ gradient, int w, int h,
                                                                  DeviceStrokePlan p, uint16_t* classified) {
  extern __shared__ float smem[];
  const int k = p.half_length, pitch = p.pitch, side = kTile + 2 * k;
  float* tile = smem;
  uint32_t* exchange = reinterpret_cast<uint32_t*>(smem + size_t(side) * pitch);
  const Owner o = owner();
  const float* plan = stage_plan<kShared>(p, smem);
  // Argmax key: total * 8 + (7 - d); the largest total wins, ties the lowest d (as on the CPU).
  uint32_t key[kRun], total[kRun];
#pragma unroll
  for (int r = 0; r < kRun; ++r) key[r] = 0;

  load_tile(gradient, w, h, k, pitch, false, tile, [](uint16_t v) { return float(v); });
  __syncthreads();
  {
    const int base = (o.across + k) * pitch + o.along0 + k;  // row o.across, columns o.along0..
    for (int s = 0; s < p.row_directions; ++s) {
      direction_total<kShared>(tile, base, plan, p.begin[s], p.begin[s + 1], total);
      const uint32_t tag = 7u - p.order[s];
#pragma unroll
      for (int r = 0; r < kRun; ++r) key[r] = max(key[r], total[r] * 8u + tag);
    }
#pragma unroll
    for (int r = 0; r < kRun; ++r) exchange[o.across * kExchangePitch + o.along0 + r] = key[r];
  }
  __syncthreads();
  load_tile(gradient, w, h, k, pitch, true, tile, [](uint16_t v) { return float(v); });
  __syncthreads();
  const int base = (o.across + k) * pitch + o.along0 + k;  // column o.across, rows o.along0..
#pragma unroll
  for (int r = 0; r < kRun; ++r) key[r] = exchange[(o.along0 + r) * kExchangePitch + o.across];
  for (int s = p.row_directions; s < kDirections; ++s) {
    direction_total<kShared>(tile, base, plan, p.begin[s], p.begin[s + 1], total);
    const uint32_t tag = 7u - p.order[s];
#pragma unroll
    for (int r = 0; r < kRun; ++r) key[r] = max(key[r], total[r] * 8u + tag);
  }
  const int x = blockIdx.x * kTile + o.across;
#pragma unroll
  for (int r = 0; r < kRun; ++r) {
    const int y = blockIdx.y * kTile + o.along0 + r;
    if (x < w && y < h)
      classified[size_t(y) * w + x] = pack_classified(int(tile[base + r]), 7 - int(key[r] & 7u));
  }
}

template <bool kShared, bool kClasses>
__global__ void __launch_bounds__(kStrokeThreads, kStrokeBlocksPerSm) draw_kernel(const uint16_t* __restrict__ classified, int w, int h,
                                                              DeviceStrokePlan p, uint32_t* sp, uint32_t* range) {
  extern __shared__ float smem[];
  const int k = p.half_length, pitch = p.pitch, side = kTile + 2 * k;
  float* tile = smem;
  uint32_t* exchange = reinterpret_cast<uint32_t*>(smem + size_t(side) * pitch);
  const Owner o = owner();
  const float* plan = stage_plan<kShared>(p, smem);
  // kClasses: the class words are loaded once and each direction's masked tile
  // is built from shared memory; else it is rebuilt from L1/L2 per direction.
  uint16_t* words = reinterpret_cast<uint16_t*>(shared_after_exchange(p, smem) +
                                                (kShared ? p.begin[kDirections] : 0));
  if constexpr (kClasses) {
    const int side = kTile + 2 * k;
    load_tile_words(classified, w, h, k, [&](int ty, int tx, uint16_t v) { words[ty * side + tx] = v; });
  }
  const int base = (o.across + k) * pitch + o.along0 + k;  // same formula in both passes
  uint32_t sum[kRun], total[kRun];
#pragma unroll
  for (int r = 0; r < kRun; ++r) sum[r] = 0;
  for (int s = 0; s < kDirections; ++s) {
    const int d = p.order[s];
    const bool transposed = s >= p.row_directions;
    if (s == p.row_directions) {  // row pass done: hand its sums over through shared memory
#pragma unroll
      for (int r = 0; r < kRun; ++r) exchange[o.across * kExchangePitch + o.along0 + r] = sum[r];
    }
    __syncthreads();
    if constexpr (kClasses) build_masked_tile(words, k, pitch, transposed, d, tile);
    else load_tile(classified, w, h, k, pitch, transposed, tile, [d](uint16_t v) { return float(masked_gradient(v, d)); });
    __syncthreads();
    if (s == p.row_directions) {
#pragma unroll
      for (int r = 0; r < kRun; ++r) sum[r] = exchange[(o.along0 + r) * kExchangePitch + o.across];
    }
    direction_total<kShared>(tile, base, plan, p.begin[s], p.begin[s + 1], total);
#pragma unroll
    for (int r = 0; r < kRun; ++r) sum[r] += total[r];
  }
  if (p.row_directions == kDirections) {  // no column pass: sums are still in row layout
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRun; ++r) exchange[o.across * kExchangePitch + o.along0 + r] = sum[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRun; ++r) sum[r] = exchange[(o.along0 + r) * kExchangePitch + o.across];
  }
  uint32_t lo = 0xFFFFFFFFu, hi = 0;
  const int x = blockIdx.x * kTile + o.across;
#pragma unroll
  for (int r = 0; r < kRun; ++r) {
    const int y = blockIdx.y * kTile + o.along0 + r;
    if (x < w && y < h) {
      sp[size_t(y) * w + x] = sum[r];
      lo = min(lo, sum[r]);
      hi = max(hi, sum[r]);
    }
  }
  lo = __reduce_min_sync(0xFFFFFFFFu, lo);
  hi = __reduce_max_sync(0xFFFFFFFFu, hi);
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&range[0], ~lo);
    atomicMax(&range[1], hi);
  }
}

size_t stroke_shared_bytes(int half_length) {
  return (size_t(stroke_tile_side(half_length)) * stroke_tile_pitch(half_length) + size_t(kTile) * kExchangePitch) *
         sizeof(float);
}

dim3 stroke_grid(int w, int h) { return dim3((w + kTile - 1) / kTile, (h + kTile - 1) / kTile); }

template <class Kernel>
void allow_all_shared(Kernel kernel, int bytes) {
  SP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  SP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     int(cudaSharedmemCarveoutMaxShared)));
}

}  // namespace

DeviceStrokePlan device_plan_view(const StrokePlan& plan, const float* device_words) {
  DeviceStrokePlan d;
  d.words = device_words;
  for (int i = 0; i <= kDirections; ++i) d.begin[i] = plan.begin[i];
  for (int i = 0; i < kDirections; ++i) d.order[i] = plan.order[i];
  d.row_directions = plan.row_directions;
  d.half_length = plan.half_length;
  d.pitch = plan.pitch;
  return d;
}

void prepare_stroke_plan(DeviceStrokePlan& plan, int width, int height, bool draw) {
  int device = 0, per_sm = 0, per_block = 0, reserved = 0, sms = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const size_t base = stroke_shared_bytes(plan.half_length) + 4 * sizeof(float);  // + alignment slack
  const size_t plan_bytes = size_t(plan.begin[kDirections]) * sizeof(float);
  const size_t class_bytes = draw ? size_t(stroke_tile_side(plan.half_length)) * stroke_tile_side(plan.half_length) * 2 : 0;
  // Layouts by preference (plan and class words staged in shared memory, or
  // read through L1/L2): the first that keeps 2 blocks per SM, else the
  // smallest. Registers allow kStrokeBlocksPerSm.
  struct Layout { bool plan, classes; size_t bytes; };
  // The plan first: read through a small L1 (most of it is shared memory) its
  // loads stall every chunk, while class-tile rebuilds are a few per block.
  std::vector<Layout> layouts = {{true, draw, base + plan_bytes + class_bytes}, {true, false, base + plan_bytes},
                                 {false, draw, base + class_bytes}, {false, false, base}};
  auto blocks = [&](size_t bytes) {
    return bytes > size_t(per_block) ? 0 : std::min(kStrokeBlocksPerSm, int(per_sm / (bytes + reserved)));
  };
  Layout pick = layouts.back();
  for (const Layout& l : layouts)
    if (blocks(l.bytes) >= 2) { pick = l; break; }
  plan.shared_plan = pick.plan;
  plan.shared_classes = pick.classes;
  size_t bytes = pick.bytes;
  // The last wave of tiles may be short: where 2 blocks per SM finish the frame
  // in fewer partial waves than 3, pad the shared memory to hold 2 (at 1080p,
  // 510 tiles are 1.29 waves of 3 x 132 but 0.97 of 2 x 132).
  if (blocks(bytes) == 3) {
    const double tiles = double(stroke_grid(width, height).x) * stroke_grid(width, height).y;
    auto efficiency = [&](int b) {
      const double slots = double(b) * sms;
      return tiles / (std::ceil(tiles / slots) * slots) * (b == 3 ? 1.0 : 0.85);  // 0.85: fewer warps to hide latency
    };
    if (efficiency(2) > efficiency(3)) bytes = std::max(bytes, size_t(per_sm / 3 - reserved + 256));
  }
  plan.shared_bytes = int(bytes);
  for (auto kernel : {classify_kernel<true>, classify_kernel<false>}) allow_all_shared(kernel, per_block);
  for (auto kernel : {draw_kernel<true, true>, draw_kernel<true, false>, draw_kernel<false, true>,
                      draw_kernel<false, false>})
    allow_all_shared(kernel, per_block);
}

void launch_median_gradient(const RgbaView& in, GradientForm form, uint16_t* gradient, cudaStream_t stream) {
  const dim3 grid((in.width + kPrepTile - 1) / kPrepTile, (in.height + kPrepTile - 1) / kPrepTile);
  median_gradient_kernel<<<grid, dim3(kPrepTile, 8), 0, stream>>>(in, form, gradient);
  SP_CUDA_CHECK_LAUNCH();
}

void launch_classify(const uint16_t* gradient, int w, int h, const DeviceStrokePlan& p, uint16_t* classified,
                     cudaStream_t stream) {
  auto kernel = p.shared_plan ? classify_kernel<true> : classify_kernel<false>;
  kernel<<<stroke_grid(w, h), kStrokeThreads, p.shared_bytes, stream>>>(gradient, w, h, p, classified);
  SP_CUDA_CHECK_LAUNCH();
}

void launch_draw(const uint16_t* classified, int w, int h, const DeviceStrokePlan& p, uint32_t* sp, uint32_t* range,
                 cudaStream_t stream) {
  auto kernel = p.shared_plan ? (p.shared_classes ? draw_kernel<true, true> : draw_kernel<true, false>)
                              : (p.shared_classes ? draw_kernel<false, true> : draw_kernel<false, false>);
  kernel<<<stroke_grid(w, h), kStrokeThreads, p.shared_bytes, stream>>>(classified, w, h, p, sp, range);
  SP_CUDA_CHECK_LAUNCH();
}

}  // namespace sp::pencil::gpu
