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

// A pinned host buffer and a device buffer of as many bytes, rows tight on both.
struct Staged {
  size_t bytes = 0;
  uint8_t* host = nullptr;
  uint8_t* device = nullptr;

  void ensure(size_t n) {
    if (n == bytes) return;
    release();
    check(cudaMallocHost(&host, n), "cudaMallocHost");
    check(cudaMalloc(&device, n), "cudaMalloc");
    bytes = n;
  }
  void release() {
    if (host) cudaFreeHost(host);
    if (device) cudaFree(device);
    host = device = nullptr;
    bytes = 0;
  }
};

void copy_rows(uint8_t* to, size_t to_pitch, const uint8_t* from, size_t from_pitch, size_t row_bytes, int rows) {
  if (to_pitch == row_bytes && from_pitch == row_bytes) {
    std::memcpy(to, from, row_bytes * size_t(rows));
    return;
  }
  for (int y = 0; y < rows; ++y) std::memcpy(to + size_t(y) * to_pitch, from + size_t(y) * from_pitch, row_bytes);
}

// Page-locked memory (the element's pinned allocator's, or the caller's):
// the GPU copies it by DMA where it is.
bool is_pinned(const void* data) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    cudaGetLastError();  // pageable memory on old drivers: not an error to keep
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

}  // namespace

struct HostStaging::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  Staged in, out;

  // One plane to the device: by DMA from pinned memory, else through `in`'s pinned rows.
  void upload_plane(uint8_t* to, const uint8_t* from, size_t from_pitch, size_t row_bytes, int rows, size_t staged_at,
                    bool pinned) {
    if (!pinned) {
      copy_rows(in.host + staged_at, row_bytes, from, from_pitch, row_bytes, rows);
      from = in.host + staged_at;
      from_pitch = row_bytes;
    }
    check(cudaMemcpy2DAsync(to, row_bytes, from, from_pitch, row_bytes, size_t(rows), cudaMemcpyHostToDevice, stream),
          "upload");
  }

  // The input's device twin, rows tight, queued on `stream`.
  InputFrame upload(const InputFrame& input, bool pinned) {
    InputFrame on_device = input;
    if (input.layout == Layout::yuv) {
      const stylepipe::YuvImage& yuv = input.yuv;
      size_t total = 0;
      for (int i = 0; i < yuv.plane_count(); ++i) total += yuv.row_bytes(i) * size_t(yuv.rows(i));
      in.ensure(total);
      size_t offset = 0;
      for (int i = 0; i < yuv.plane_count(); ++i) {
        upload_plane(in.device + offset, yuv.planes[i], yuv.pitches[i], yuv.row_bytes(i), yuv.rows(i), offset, pinned);
        on_device.yuv.planes[i] = in.device + offset;
        on_device.yuv.pitches[i] = yuv.row_bytes(i);
        offset += yuv.row_bytes(i) * size_t(yuv.rows(i));
      }
    } else {
      const stylepipe::Image& rgba = input.packed;
      const size_t row = size_t(rgba.width) * 4;
      in.ensure(row * size_t(rgba.height));
      upload_plane(in.device, rgba.data, rgba.pitch, row, rgba.height, 0, pinned);
      on_device.packed = {in.device, rgba.width, rgba.height, row};
    }
    return on_device;
  }
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

bool HostStaging::run(stylepipe::Chain& chain, const InputFrame& input, const stylepipe::Image& output,
                      const stylepipe::RunOptions& options) {
  Impl& s = *impl_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  const void* first_plane = input.layout == Layout::yuv ? static_cast<const void*>(input.yuv.planes[0]) : input.packed.data;
  const bool input_pinned = is_pinned(first_plane), output_pinned = is_pinned(output.data);
  const InputFrame on_device = s.upload(input, input_pinned);
  const size_t out_row = size_t(output.width) * 4;
  s.out.ensure(out_row * size_t(output.height));
  const stylepipe::Image device_output{s.out.device, output.width, output.height, out_row};
  stylepipe::RunOptions on_stream = options;
  on_stream.cuda_stream = s.stream;
  run_chain(chain, on_device, device_output, on_stream);
  uint8_t* download_to = output_pinned ? output.data : s.out.host;
  const size_t download_pitch = output_pinned ? output.pitch : out_row;
  check(cudaMemcpy2DAsync(download_to, download_pitch, s.out.device, out_row, out_row, size_t(output.height),
                          cudaMemcpyDeviceToHost, s.stream),
        "download");
  check(cudaStreamSynchronize(s.stream), "the chain's work");
  if (!output_pinned) copy_rows(output.data, output.pitch, s.out.host, out_row, out_row, output.height);
  return input_pinned && output_pinned;
}

}  // namespace spgst
