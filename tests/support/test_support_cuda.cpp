// The GPU side of the test support (CUDA builds only).
#include <cuda_runtime.h>

#include "pipeline/buffer_pool.h"
#include "pipeline/cuda_check.h"
#include "tests/support/test_support.h"

namespace sp::test {

HostImage run_stage_cuda(Stage& stage, const HostImage& in, int64_t frame_index) {
  static BufferPool pool;  // one pool per process; stage scratch is released on destruction below
  PooledScratch scratch(pool, MemoryKind::device);
  const Size out_size = stage.configure(in.view().size(), Backend::cuda, scratch);
  HostImage out(out_size.width, out_size.height);
  cudaStream_t stream;
  SP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  uint8_t *d_in = nullptr, *d_out = nullptr;
  SP_CUDA_CHECK(cudaMalloc(&d_in, in.pixels.size()));
  SP_CUDA_CHECK(cudaMalloc(&d_out, out.pixels.size() + 1));
  SP_CUDA_CHECK(cudaMemcpyAsync(d_in, in.pixels.data(), in.pixels.size(), cudaMemcpyHostToDevice, stream));
  // Poison the output so unwritten pixels show up as differences.
  SP_CUDA_CHECK(cudaMemsetAsync(d_out, 0xA5, out.pixels.size(), stream));
  RgbaView vin{d_in, in.width, in.height, in.pitch};
  RgbaView vout{d_out, out.width, out.height, out.pitch};
  FrameInfo info;
  info.index = frame_index;
  stage.process_cuda(vin, vout, info, stream);
  SP_CUDA_CHECK_LAUNCH();
  SP_CUDA_CHECK(cudaMemcpyAsync(out.pixels.data(), d_out, out.pixels.size(), cudaMemcpyDeviceToHost, stream));
  SP_CUDA_CHECK(cudaStreamSynchronize(stream));
  SP_CUDA_CHECK(cudaFree(d_in));
  SP_CUDA_CHECK(cudaFree(d_out));
  SP_CUDA_CHECK(cudaStreamDestroy(stream));
  return out;
}

}  // namespace sp::test
