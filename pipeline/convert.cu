// CUDA side of the colour conversions: one thread per 2x2 luma block for
// 4:2:0 formats (chroma read/written once per block), one per pixel otherwise.
// All arithmetic is in convert_pixel.h, shared with the CPU backend.
#include "pipeline/convert.h"
#include "pipeline/convert_formats.h"
#include "pipeline/cuda_check.h"

namespace sp {

using namespace convert_detail;

namespace {

// 32 threads along a row keep every warp's accesses within one or two rows.
const dim3 kBlock(32, 8);

dim3 grid_for(int columns, int rows) {
  return dim3((columns + kBlock.x - 1) / kBlock.x, (rows + kBlock.y - 1) / kBlock.y);
}

template <class Src>
__global__ void yuv420_to_rgba_kernel(Src src, YuvToRgb k, RgbaView dst, int chroma_w, int chroma_h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= chroma_w || j >= chroma_h) return;
  yuv420_block_to_rgba(src, k, i, j, dst);
}

template <class Src>
__global__ void pixels_to_rgba_kernel(Src src, YuvToRgb k, RgbaView dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= dst.width || y >= dst.height) return;
  dst.row32(y)[x] = src.rgba(x, y, k);
}

template <class Dst>
__global__ void rgba_to_yuv420_kernel(RgbaView src, RgbToYuv k, Dst dst, int chroma_w, int chroma_h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= chroma_w || j >= chroma_h) return;
  rgba_block_to_yuv420(src, k, i, j, dst);
}

template <class Dst>
__global__ void rgba_to_pixels_kernel(RgbaView src, RgbToYuv k, Dst dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= src.width || y >= src.height) return;
  dst.put(x, y, src.row32(y)[x], k);
}

}  // namespace

void convert_to_rgba_cuda(const PlanarView& src, const ColorSpec& color, const RgbaView& dst, cudaStream_t stream) {
  check_convert_sizes(src, dst);
  visit_source(src, [&](const auto& s) {
    using Src = std::decay_t<decltype(s)>;
    const YuvToRgb k = make_yuv_to_rgb(color, Src::kBits);
    if constexpr (Src::kSubsampled) {
      const int cw = (dst.width + 1) / 2, ch = (dst.height + 1) / 2;
      yuv420_to_rgba_kernel<<<grid_for(cw, ch), kBlock, 0, stream>>>(s, k, dst, cw, ch);
    } else {
      pixels_to_rgba_kernel<<<grid_for(dst.width, dst.height), kBlock, 0, stream>>>(s, k, dst);
    }
    SP_CUDA_CHECK_LAUNCH();
  });
}

void convert_from_rgba_cuda(const RgbaView& src, const ColorSpec& color, const PlanarView& dst, cudaStream_t stream) {
  check_convert_sizes(dst, src);
  visit_dest(dst, [&](const auto& d) {
    using Dst = std::decay_t<decltype(d)>;
    const RgbToYuv k = make_rgb_to_yuv(color, Dst::kBits);
    if constexpr (Dst::kSubsampled) {
      const int cw = (src.width + 1) / 2, ch = (src.height + 1) / 2;
      rgba_to_yuv420_kernel<<<grid_for(cw, ch), kBlock, 0, stream>>>(src, k, d, cw, ch);
    } else {
      rgba_to_pixels_kernel<<<grid_for(src.width, src.height), kBlock, 0, stream>>>(src, k, d);
    }
    SP_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace sp
