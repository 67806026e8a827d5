// Stroke branch on CUDA: 8 line responses + argmax (one kernel), drawing
// convolution + sum + frame range (one kernel). The line convolutions follow a
// StrokePlan (pencil_stroke_plan.h): byte dot products (dp4a), running sums
// and int8 tensor-core products on byte tiles in shared memory, all exact
// integer sums, so results equal the CPU's bit for bit.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cuda.h"
#include "stages/pencil/pencil_stroke_device.cuh"
#include "stages/pencil/pencil_stroke_mma_device.cuh"

namespace sp::pencil::gpu {

namespace {

using namespace stroke;

template <bool kShared>
__global__ void __launch_bounds__(kStrokeThreads, kStrokeBlocksPerSm) classify_kernel(const uint16_t* __restrict__ gradient, int w, int h,
                                                                  DeviceStrokePlan p, uint16_t* classified) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int k = p.half_length, pitch = p.pitch;
  uint8_t* tile = smem;
  uint32_t* exchange = reinterpret_cast<uint32_t*>(smem + exchange_offset(k));
  const Owner o = owner();
  const uint32_t* plan = stage_plan<kShared>(p, smem);
  // Argmax key: total * 8 + (7 - d); the largest total wins, ties the lowest d (as on the CPU).
  uint32_t key[kRun], total[kRun];
#pragma unroll
  for (int r = 0; r < kRun; ++r) key[r] = 0;

  load_byte_tile(gradient, w, h, k, pitch, false, tile);
  __syncthreads();
  {
    const int base = (o.across + k) * pitch + o.along0 + k;  // row o.across, columns o.along0..
    for (int s = 0; s < p.row_directions; ++s) {
      simd::direction_total<kShared>(tile, base, plan, p.begin[s], p.begin[s + 1], total);
      const uint32_t tag = 7u - p.order[s];
#pragma unroll
      for (int r = 0; r < kRun; ++r) key[r] = max(key[r], total[r] * 8u + tag);
    }
#pragma unroll
    for (int r = 0; r < kRun; ++r) exchange[o.across * kExchangePitch + o.along0 + r] = key[r];
  }
  if (p.mma_begin < p.mma_column_begin) {
    __syncthreads();
    mma_classify<kShared>(tile, p, plan, p.mma_begin, p.mma_column_begin, false, exchange);
  }
  __syncthreads();
  load_byte_tile(gradient, w, h, k, pitch, true, tile);
  __syncthreads();
  if (p.mma_column_begin < kDirections) {
    mma_classify<kShared>(tile, p, plan, p.mma_column_begin, kDirections, true, exchange);
    __syncthreads();
  }
  const int base = (o.across + k) * pitch + o.along0 + k;  // column o.across, rows o.along0..
#pragma unroll
  for (int r = 0; r < kRun; ++r) key[r] = exchange[(o.along0 + r) * kExchangePitch + o.across];
  for (int s = p.row_directions; s < p.diagonal_begin; ++s) {
    simd::direction_total<kShared>(tile, base, plan, p.begin[s], p.begin[s + 1], total);
    const uint32_t tag = 7u - p.order[s];
#pragma unroll
    for (int r = 0; r < kRun; ++r) key[r] = max(key[r], total[r] * 8u + tag);
  }
  // Diagonal directions: their prefix tile overwrites the byte tile, so the
  // output's own gradient is read again from global memory (L2) below.
  uint16_t* prefix = reinterpret_cast<uint16_t*>(smem);
  for (int s = p.diagonal_begin; s < p.mma_begin; ++s) {
    __syncthreads();
    build_prefix(k, diagonal_step(p.order[s]), prefix, [&](auto store) {
      load_tile_words(gradient, w, h, k, [&](int ty, int tx, uint16_t v) { store(ty, tx, uint8_t(v)); });
    });
    diagonal_direction<kShared>(prefix, p, plan, s, o, total);
    const uint32_t tag = 7u - p.order[s];
#pragma unroll
    for (int r = 0; r < kRun; ++r) key[r] = max(key[r], total[r] * 8u + tag);
  }
  const bool tile_kept = p.diagonal_begin == p.mma_begin;
  const int x = blockIdx.x * kTile + o.across;
#pragma unroll
  for (int r = 0; r < kRun; ++r) {
    const int y = blockIdx.y * kTile + o.along0 + r;
    if (x < w && y < h) {
      const int g = tile_kept ? tile[base + r] : uint8_t(__ldg(gradient + size_t(y) * w + x));
      classified[size_t(y) * w + x] = pack_classified(g, 7 - int(key[r] & 7u));
    }
  }
}

template <bool kShared, bool kClasses>
__global__ void __launch_bounds__(kStrokeThreads, kStrokeBlocksPerSm) draw_kernel(const uint16_t* __restrict__ classified, int w, int h,
                                                              DeviceStrokePlan p, uint32_t* sp, uint32_t* range) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int k = p.half_length, pitch = p.pitch;
  uint8_t* tile = smem;
  uint32_t* exchange = reinterpret_cast<uint32_t*>(smem + exchange_offset(k));
  const Owner o = owner();
  const uint32_t* plan = stage_plan<kShared>(p, smem);
  // kClasses: the class words are loaded once and each direction's masked tile
  // is built from shared memory; else it is rebuilt from L1/L2 per direction.
  uint16_t* words = reinterpret_cast<uint16_t*>(smem + class_offset(p, kShared ? p.begin[kDirections] : 0));
  const int side = kTile + 2 * k;
  if constexpr (kClasses) load_tile_words(classified, w, h, k, [&](int ty, int tx, uint16_t v) { words[ty * side + tx] = v; });
  const int base = (o.across + k) * pitch + o.along0 + k;  // same formula in both passes
  // Direction d's class-masked byte tile, row-major or transposed; synchronized on both sides.
  auto masked_tile = [&](int d, bool transposed) {
    __syncthreads();
    if constexpr (kClasses) {
      build_masked_tile(words, k, pitch, transposed, d, tile);
    } else {
      load_tile_words(classified, w, h, k, [&](int ty, int tx, uint16_t v) {
        tile[transposed ? tx * pitch + ty : ty * pitch + tx] = uint8_t(masked_gradient(v, d));
      });
    }
    __syncthreads();
  };
  uint32_t sum[kRun], total[kRun];
#pragma unroll
  for (int r = 0; r < kRun; ++r) sum[r] = 0;
  for (int s = 0; s < p.row_directions; ++s) {
    masked_tile(p.order[s], false);
    simd::direction_total<kShared>(tile, base, plan, p.begin[s], p.begin[s + 1], total);
#pragma unroll
    for (int r = 0; r < kRun; ++r) sum[r] += total[r];
  }
  // Row pass done: its sums go through shared memory, where the tensor-core
  // directions of both passes add theirs (each warp group half of the lines).
#pragma unroll
  for (int r = 0; r < kRun; ++r) exchange[o.across * kExchangePitch + o.along0 + r] = sum[r];
  const int group = (threadIdx.x >> 5) / kMmaWarpsPerGroup, groups = kStrokeThreads / 32 / kMmaWarpsPerGroup;
  for (int pass = 0; pass < 2; ++pass) {
    const int first = pass == 0 ? p.mma_begin : p.mma_column_begin, last = pass == 0 ? p.mma_column_begin : kDirections;
    if (first == last) continue;
    MmaAccumulators c;
    mma_clear(c);
    for (int s = first; s < last; ++s) {
      masked_tile(p.order[s], pass == 1);
      mma_lines<kShared>(tile, pitch, plan, p.begin[s], p.begin[s + 1], group, groups, c);
    }
    mma_hand_over(c, exchange, kExchangePitch, pass == 1, [&](int slot, uint32_t v) { atomicAdd(exchange + slot, v); });
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRun; ++r) sum[r] = exchange[(o.along0 + r) * kExchangePitch + o.across];
  for (int s = p.row_directions; s < p.diagonal_begin; ++s) {
    masked_tile(p.order[s], true);
    simd::direction_total<kShared>(tile, base, plan, p.begin[s], p.begin[s + 1], total);
#pragma unroll
    for (int r = 0; r < kRun; ++r) sum[r] += total[r];
  }
  // Diagonal directions (column-pass layout), each from its prefix tile over the tile and the exchange.
  uint16_t* prefix = reinterpret_cast<uint16_t*>(smem);
  for (int s = p.diagonal_begin; s < p.mma_begin; ++s) {
    const int d = p.order[s];
    __syncthreads();
    build_prefix(k, diagonal_step(d), prefix, [&](auto store) {
      if constexpr (kClasses) {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        for (int ty = warp; ty < side; ty += kStrokeThreads / 32)
          for (int tx = lane; tx < side; tx += 32) store(ty, tx, masked_gradient(words[ty * side + tx], d));
      } else {
        load_tile_words(classified, w, h, k, [&](int ty, int tx, uint16_t v) { store(ty, tx, masked_gradient(v, d)); });
      }
    });
    diagonal_direction<kShared>(prefix, p, plan, s, o, total);
#pragma unroll
    for (int r = 0; r < kRun; ++r) sum[r] += total[r];
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

dim3 stroke_grid(int w, int h) { return dim3((w + kTile - 1) / kTile, (h + kTile - 1) / kTile); }

template <class Kernel>
void allow_all_shared(Kernel kernel, int bytes) {
  SP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  SP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     int(cudaSharedmemCarveoutMaxShared)));
}

}  // namespace

DeviceStrokePlan device_plan_view(const StrokePlan& plan, const uint32_t* device_words) {
  DeviceStrokePlan d;
  d.words = device_words;
  for (int i = 0; i <= kDirections; ++i) d.begin[i] = plan.begin[i];
  for (int i = 0; i < kDirections; ++i) d.order[i] = plan.order[i];
  d.row_directions = plan.row_directions;
  d.diagonal_begin = plan.diagonal_begin;
  d.mma_begin = plan.mma_begin;
  d.mma_column_begin = plan.mma_column_begin;
  d.half_length = plan.half_length;
  d.pitch = plan.pitch;
  return d;
}

namespace {

struct Layout {
  bool plan, classes;  // staged in shared memory
  size_t bytes;
  int blocks;  // per SM
};
struct SharedLimits {
  int per_sm = 0, per_block = 0, reserved = 0;
};
SharedLimits shared_limits() {
  SharedLimits l;
  int device = 0;
  SP_CUDA_CHECK(cudaGetDevice(&device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&l.per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&l.per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&l.reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  return l;
}

Layout choose_layout(const DeviceStrokePlan& plan, bool draw, const SharedLimits& limits) {
  const size_t base = plan_offset(plan);  // byte tile + exchange, or the prefix tile over them
  const size_t plan_bytes = size_t(plan.begin[kDirections]) * sizeof(uint32_t);
  const size_t class_bytes = draw ? size_t(stroke_tile_side(plan.half_length)) * stroke_tile_side(plan.half_length) * 2 : 0;
  auto blocks = [&](size_t bytes) {
    return bytes > size_t(limits.per_block) ? 0
                                            : std::min(kStrokeBlocksPerSm, int(limits.per_sm / (bytes + limits.reserved)));
  };
  // Layouts by preference (plan and class words staged in shared memory, or
  // read through L1/L2): the first that allows kStrokeBlocksPerSm (3) blocks
  // per SM, else the first that allows 2, else the smallest. Resident warps
  // beat a full last wave: 3 blocks take 0.241 ms at 1080p (510 tiles, the
  // second wave of 3 x 132 blocks 29% full) and 0.81 ms at 2560x1920, where
  // 2 blocks per SM (1.93 and 4.55 waves) took 0.247 and 0.90 ms.
  // The plan first: read through a small L1 (most of it is shared memory) its
  // loads stall every chunk, while class-tile rebuilds are a few per block.
  std::vector<Layout> layouts = {{true, draw, base + plan_bytes + class_bytes, 0}, {true, false, base + plan_bytes, 0},
                                 {false, draw, base + class_bytes, 0}, {false, false, base, 0}};
  for (Layout& l : layouts) l.blocks = blocks(l.bytes);
  for (int wanted : {kStrokeBlocksPerSm, 2}) {
    auto it = std::find_if(layouts.begin(), layouts.end(), [&](const Layout& l) { return l.blocks >= wanted; });
    if (it != layouts.end()) return *it;
  }
  return layouts.back();
}

}  // namespace

bool stroke_layout_at_least(const StrokePlan& plan, const StrokePlan& other, bool draw) {
  const SharedLimits limits = shared_limits();
  const Layout a = choose_layout(device_plan_view(plan, nullptr), draw, limits);
  const Layout b = choose_layout(device_plan_view(other, nullptr), draw, limits);
  // Blocks per SM first, then the plan staged, then the class words (the preference order above).
  return std::make_tuple(a.blocks, a.plan, a.classes) >= std::make_tuple(b.blocks, b.plan, b.classes);
}

void prepare_stroke_plan(DeviceStrokePlan& plan, bool draw) {
  const SharedLimits limits = shared_limits();
  const Layout pick = choose_layout(plan, draw, limits);
  plan.shared_plan = pick.plan;
  plan.shared_classes = pick.classes;
  plan.shared_bytes = int(pick.bytes);
  for (auto kernel : {classify_kernel<true>, classify_kernel<false>}) allow_all_shared(kernel, limits.per_block);
  for (auto kernel : {draw_kernel<true, true>, draw_kernel<true, false>, draw_kernel<false, true>,
                      draw_kernel<false, false>})
    allow_all_shared(kernel, limits.per_block);
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
