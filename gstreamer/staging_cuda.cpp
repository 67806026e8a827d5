// System memory frames on the CUDA backend: each frame goes through pinned
// host buffers (so that the copies are DMA, not the driver's own pageable
// staging) to device images, through the chain on the element's stream, and
// back. The frame is finished before run() returns (the buffer is pushed next).
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "gstreamer/engine.h"
#include "stylepipe/errors.h"

namespace spgst {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw stylepipe::DeviceError(stylepipe::ExitCode::unavailable,
                                 std::string("stylepipe element: ") + what + ": " + cudaGetErrorString(status));
}

// A pinned host buffer and a pitched device image of one size.
struct Staged {
  int width = 0, height = 0;
  uint8_t* host = nullptr;  // rows of 4 * width bytes
  uint8_t* device = nullptr;
  size_t device_pitch = 0;

  void ensure(int w, int h) {
    if (w == width && h == height) return;
    release();
    check(cudaMallocHost(&host, size_t(w) * 4 * size_t(h)), "cudaMallocHost");
    void* d = nullptr;
    check(cudaMallocPitch(&d, &device_pitch, size_t(w) * 4, size_t(h)), "cudaMallocPitch");
    device = static_cast<uint8_t*>(d);
    width = w;
    height = h;
  }
  void release() {
    if (host) cudaFreeHost(host);
    if (device) cudaFree(device);
    host = device = nullptr;
    width = height = 0;
  }
  stylepipe::Image device_image() const { return {device, width, height, device_pitch}; }
  size_t host_pitch() const { return size_t(width) * 4; }
};

void copy_rows(uint8_t* to, size_t to_pitch, const uint8_t* from, size_t from_pitch, size_t row_bytes, int rows) {
  if (to_pitch == row_bytes && from_pitch == row_bytes) {
    std::memcpy(to, from, row_bytes * size_t(rows));
    return;
  }
  for (int y = 0; y < rows; ++y) std::memcpy(to + size_t(y) * to_pitch, from + size_t(y) * from_pitch, row_bytes);
}

}  // namespace

struct HostStaging::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  Staged in, out;
};

HostStaging::HostStaging(int device) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
}

HostStaging::~HostStaging() {
  cudaSetDevice(impl_->device);
  if (impl_->stream) {
    cudaStreamSynchronize(impl_->stream);
    cudaStreamDestroy(impl_->stream);
  }
  impl_->in.release();
  impl_->out.release();
}

void HostStaging::run(stylepipe::Chain& chain, const stylepipe::Image& input, const stylepipe::Image& output,
                      const stylepipe::RunOptions& options) {
  Impl& s = *impl_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.in.ensure(input.width, input.height);
  s.out.ensure(output.width, output.height);
  const size_t in_row = size_t(input.width) * 4, out_row = size_t(output.width) * 4;
  copy_rows(s.in.host, s.in.host_pitch(), input.data, input.pitch, in_row, input.height);
  check(cudaMemcpy2DAsync(s.in.device, s.in.device_pitch, s.in.host, s.in.host_pitch(), in_row, size_t(input.height),
                          cudaMemcpyHostToDevice, s.stream),
        "upload");
  stylepipe::RunOptions on_stream = options;
  on_stream.cuda_stream = s.stream;
  chain.run(s.in.device_image(), s.out.device_image(), on_stream);
  check(cudaMemcpy2DAsync(s.out.host, s.out.host_pitch(), s.out.device, s.out.device_pitch, out_row,
                          size_t(output.height), cudaMemcpyDeviceToHost, s.stream),
        "download");
  check(cudaStreamSynchronize(s.stream), "the chain's work");
  copy_rows(output.data, output.pitch, s.out.host, s.out.host_pitch(), out_row, output.height);
}

}  // namespace spgst
