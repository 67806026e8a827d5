// CUDA colour conversions against the CPU ones: bit-exact, every format,
// matrix and range, odd sizes and padded pitches, nothing written outside
// the picture.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>

#include "pipeline/convert.h"
#include "pipeline/cuda_check.h"
#include "tests/convert_test_util.h"

namespace sp::test {
namespace {

struct DeviceBytes {
  uint8_t* ptr = nullptr;
  explicit DeviceBytes(size_t n) { SP_CUDA_CHECK(cudaMalloc(&ptr, n)); }
  ~DeviceBytes() { cudaFree(ptr); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
};

// Host RGBA with a row pitch larger than the pixels, filled with a poison
// value so writes outside the picture show up.
struct PaddedRgba {
  int width, height;
  size_t pitch;
  std::vector<uint8_t> bytes;
  PaddedRgba(int w, int h, size_t pad_pixels) : width(w), height(h), pitch(4 * (size_t(w) + pad_pixels)) {
    bytes.assign(pitch * h, 0xA5);
  }
  RgbaView view(uint8_t* base) const { return {base, width, height, pitch}; }
  RgbaView view() { return view(bytes.data()); }
};

PlanarView rebase(const Picture& p, uint8_t* base) {
  PlanarView v = p.view;
  for (int i = 0; i < p.layout.count; ++i) v.plane[i] = base + (p.view.plane[i] - p.bytes.data());
  return v;
}

struct Shape {
  int w, h;
};
const Shape kShapes[] = {{1, 1}, {3, 2}, {37, 23}, {64, 48}, {1920, 1080}};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { SP_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

std::string describe(PixelFormat f, const ColorSpec& c, const Shape& s) {
  return std::string(to_string(f)) + " " + to_string(c.matrix) + " " + to_string(c.range) + " " + std::to_string(s.w) +
         "x" + std::to_string(s.h);
}

TEST(ConvertCuda, ToRgbaIsBitExactWithCpu) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed + 10);
  Stream stream;
  for (const auto& [f, color] : all_conversion_cases())
    for (const Shape s : kShapes) {
      const size_t pad = rng() % 2 ? 0 : 1 + rng() % 40;
      const Picture src = random_picture(f, s.w, s.h, rng, pad);
      PaddedRgba cpu(s.w, s.h, pad % 5), gpu(s.w, s.h, pad % 5);
      convert_to_rgba_cpu(src.view, color, cpu.view());

      DeviceBytes d_src(src.bytes.size()), d_dst(gpu.bytes.size());
      SP_CUDA_CHECK(cudaMemcpyAsync(d_src.ptr, src.bytes.data(), src.bytes.size(), cudaMemcpyHostToDevice, stream.s));
      SP_CUDA_CHECK(cudaMemcpyAsync(d_dst.ptr, gpu.bytes.data(), gpu.bytes.size(), cudaMemcpyHostToDevice, stream.s));
      convert_to_rgba_cuda(rebase(src, d_src.ptr), color, gpu.view(d_dst.ptr), stream.s);
      SP_CUDA_CHECK(cudaMemcpyAsync(gpu.bytes.data(), d_dst.ptr, gpu.bytes.size(), cudaMemcpyDeviceToHost, stream.s));
      SP_CUDA_CHECK(cudaStreamSynchronize(stream.s));

      size_t first = 0;
      while (first < cpu.bytes.size() && cpu.bytes[first] == gpu.bytes[first]) ++first;
      ASSERT_EQ(first, cpu.bytes.size()) << describe(f, color, s) << ": first difference at byte " << first << " (row "
                                         << first / cpu.pitch << "), cpu " << int(cpu.bytes[first]) << " gpu "
                                         << int(gpu.bytes[first]) << " (seed " << seed << ")";
    }
}

TEST(ConvertCuda, FromRgbaIsBitExactWithCpu) {
  SP_REQUIRE_CUDA();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed + 11);
  Stream stream;
  for (const auto& [f, color] : all_conversion_cases())
    for (const Shape s : kShapes) {
      const size_t pad = rng() % 2 ? 0 : 1 + rng() % 40;
      PaddedRgba src(s.w, s.h, pad % 3);
      for (auto& b : src.bytes) b = uint8_t(rng());
      Picture cpu(f, s.w, s.h, pad), gpu(f, s.w, s.h, pad);
      convert_from_rgba_cpu(src.view(), color, cpu.view);

      DeviceBytes d_src(src.bytes.size()), d_dst(gpu.bytes.size());
      SP_CUDA_CHECK(cudaMemcpyAsync(d_src.ptr, src.bytes.data(), src.bytes.size(), cudaMemcpyHostToDevice, stream.s));
      SP_CUDA_CHECK(cudaMemcpyAsync(d_dst.ptr, gpu.bytes.data(), gpu.bytes.size(), cudaMemcpyHostToDevice, stream.s));
      convert_from_rgba_cuda(src.view(d_src.ptr), color, rebase(gpu, d_dst.ptr), stream.s);
      SP_CUDA_CHECK(cudaMemcpyAsync(gpu.bytes.data(), d_dst.ptr, gpu.bytes.size(), cudaMemcpyDeviceToHost, stream.s));
      SP_CUDA_CHECK(cudaStreamSynchronize(stream.s));

      size_t first = 0;
      while (first < cpu.bytes.size() && cpu.bytes[first] == gpu.bytes[first]) ++first;
      ASSERT_EQ(first, cpu.bytes.size()) << describe(f, color, s) << ": first difference at byte " << first << ", cpu "
                                         << int(cpu.bytes[first]) << " gpu " << int(gpu.bytes[first]) << " (seed "
                                         << seed << ")";
    }
}

}  // namespace
}  // namespace sp::test
