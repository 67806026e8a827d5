// The public chain on CUDA memory: the CPU's pictures, on the caller's
// stream, in place, and host memory refused.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "pipeline/convert.h"
#include "stylepipe/chain.h"
#include "stylepipe/errors.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

#define CHECK_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

stylepipe::Image image_of(HostImage& h) { return {h.pixels.data(), h.width, h.height, h.pitch}; }

struct DeviceImage {
  stylepipe::Image image;
  DeviceImage(int width, int height) {
    size_t pitch = 0;
    EXPECT_EQ(cudaMallocPitch(reinterpret_cast<void**>(&image.data), &pitch, size_t(width) * 4, size_t(height)), cudaSuccess);
    image.width = width;
    image.height = height;
    image.pitch = pitch;
  }
  ~DeviceImage() { cudaFree(image.data); }
};

// What the backends promise (README): xbr, scale and pencil (its default
// fast tone) to the bit (stages/pencil's own CPU-against-CUDA test holds
// pencil to the same).
void expect_backends_agree(const std::string& yaml, const HostImage& got, const HostImage& expected) {
  const ImageDiff d = compare(got, expected);
  EXPECT_EQ(d.differing_bytes, 0u) << yaml << ": max " << d.max_abs;
}

TEST(PublicChainGpu, MatchesTheCpuOnTheCallersStreamAndInPlace) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const int width = 211, height = 117;
  HostImage source = synthetic_photo(width, height, rng);
  auto cpu = stylepipe::Session::open(stylepipe::Device::cpu());
  auto gpu = stylepipe::Session::open(stylepipe::Device::cuda(0));
  for (const std::string yaml : {"pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n",
                           "pipeline:\n  - xbr: {scale: 3}\n", "pipeline:\n  - scale: {factor: 0.5}\n  - pencil: {}\n",
                                "pipeline:\n  - scale: {factor: 0.5}\n"}) {
    SCOPED_TRACE(yaml);
    stylepipe::Chain on_cpu = stylepipe::Chain::from_yaml(yaml, cpu);
    stylepipe::Chain on_gpu = stylepipe::Chain::from_yaml(yaml, gpu);
    const stylepipe::Size out = on_cpu.output_size({width, height});
    ASSERT_EQ(on_gpu.output_size({width, height}), out);
    cudaStream_t stream = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    DeviceImage in(width, height), result(out.width, out.height);
    for (int frame = 0; frame < 3; ++frame) {
      HostImage picture = frame == 0 ? source : synthetic_photo(width, height, rng);
      HostImage expected(out.width, out.height), got(out.width, out.height);
      on_cpu.run(image_of(picture), image_of(expected));
      CHECK_CUDA(cudaMemcpy2DAsync(in.image.data, in.image.pitch, picture.pixels.data(), picture.pitch,
                                   picture.pitch, size_t(height), cudaMemcpyHostToDevice, stream));
      CHECK_CUDA(cudaMemset2DAsync(result.image.data, result.image.pitch, 0xA5, size_t(out.width) * 4,
                                   size_t(out.height), stream));
      on_gpu.run(in.image, result.image, {stream, std::nullopt});
      CHECK_CUDA(cudaMemcpy2DAsync(got.pixels.data(), got.pitch, result.image.data, result.image.pitch, got.pitch,
                                   size_t(out.height), cudaMemcpyDeviceToHost, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      SCOPED_TRACE(testing::Message() << "frame " << frame);
      expect_backends_agree(yaml, got, expected);
    }
    if (out == stylepipe::Size{width, height}) {  // in place: the output over the input
      on_gpu.reset();
      on_cpu.reset();
      HostImage expected(width, height), got(width, height);
      on_cpu.run(image_of(source), image_of(expected));
      CHECK_CUDA(cudaMemcpy2DAsync(in.image.data, in.image.pitch, source.pixels.data(), source.pitch, source.pitch,
                                   size_t(height), cudaMemcpyHostToDevice, stream));
      on_gpu.run(in.image, in.image, {stream, std::nullopt});
      CHECK_CUDA(cudaMemcpy2DAsync(got.pixels.data(), got.pitch, in.image.data, in.image.pitch, got.pitch,
                                   size_t(height), cudaMemcpyDeviceToHost, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      SCOPED_TRACE("in place");
      expect_backends_agree(yaml, got, expected);
    }
    CHECK_CUDA(cudaStreamDestroy(stream));
  }
}

// NV12 and I420 planes in device memory (the layouts of NVDEC and of
// GStreamer's CUDA memory), at padded pitches: the CPU's bytes (xbr is
// bit-identical between the backends, so is the conversion).
TEST(PublicChainGpu, YuvPlanesInDeviceMemoryMatchTheCpu) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const int width = 161, height = 93;
  auto cpu = stylepipe::Session::open(stylepipe::Device::cpu());
  auto gpu = stylepipe::Session::open(stylepipe::Device::cuda(0));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (PixelFormat format : {PixelFormat::nv12, PixelFormat::yuv420p}) {
    SCOPED_TRACE(to_string(format));
    const PlaneLayout layout = plane_layout(format, width, height, 256);  // pitches of 256-byte multiples
    std::vector<uint8_t> host(layout.total_bytes());
    uint8_t* device = nullptr;
    CHECK_CUDA(cudaMalloc(&device, host.size()));
    PlanarView planes{format, width, height};
    stylepipe::YuvImage on_host, on_device;
    on_host.format = on_device.format = format == PixelFormat::nv12 ? stylepipe::YuvFormat::nv12 : stylepipe::YuvFormat::i420;
    on_host.matrix = on_device.matrix = stylepipe::YuvMatrix::bt709;
    on_host.width = on_device.width = width;
    on_host.height = on_device.height = height;
    size_t offset = 0;
    for (int i = 0; i < layout.count; ++i) {
      planes.plane[i] = host.data() + offset;
      planes.pitch[i] = layout.pitch[i];
      on_host.planes[i] = host.data() + offset;
      on_device.planes[i] = device + offset;
      on_host.pitches[i] = on_device.pitches[i] = layout.pitch[i];
      offset += layout.bytes(i);
    }
    convert_from_rgba_cpu(synthetic_photo(width, height, rng).view(), {ColorMatrix::bt709, ColorRange::limited}, planes);
    CHECK_CUDA(cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice));
    const std::string yaml = "pipeline:\n  - xbr: {scale: 2}\n";
    HostImage expected(2 * width, 2 * height), got(2 * width, 2 * height);
    stylepipe::Chain::from_yaml(yaml, cpu).run(on_host, image_of(expected));
    DeviceImage result(2 * width, 2 * height);
    stylepipe::Chain::from_yaml(yaml, gpu).run(on_device, result.image, {stream, std::nullopt});
    CHECK_CUDA(cudaMemcpy2DAsync(got.pixels.data(), got.pitch, result.image.data, result.image.pitch, got.pitch,
                                 size_t(got.height), cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    EXPECT_EQ(compare(got, expected).differing_bytes, 0u);
    stylepipe::Chain host_planes = stylepipe::Chain::from_yaml(yaml, gpu);
    EXPECT_THROW(host_planes.run(on_host, result.image, {stream, std::nullopt}), stylepipe::DeviceError);
    CHECK_CUDA(cudaFree(device));
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
}

TEST(PublicChainGpu, HostMemoryIsRefusedNotCopied) {
  SP_REQUIRE_CUDA();
  auto gpu = stylepipe::Session::open(stylepipe::Device::cuda(0));
  stylepipe::Chain chain = stylepipe::Chain::from_stages({{"pencil", {}}}, gpu);
  HostImage host(32, 16);
  DeviceImage device(32, 16);
  EXPECT_THROW(chain.run(image_of(host), device.image), stylepipe::DeviceError);
  EXPECT_THROW(chain.run(device.image, image_of(host)), stylepipe::DeviceError);
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  EXPECT_THROW(stylepipe::Session::open(stylepipe::Device::cuda(count)), stylepipe::DeviceError);
}

}  // namespace
}  // namespace sp::test
