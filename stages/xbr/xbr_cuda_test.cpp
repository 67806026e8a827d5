// CUDA xbr against the CPU backend (itself checked against FFmpeg), bit for bit.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "pipeline/cuda_check.h"
#include "stages/xbr/xbr.h"
#include "stages/xbr/xbr_test_util.h"

namespace sp::test {
namespace {

XbrSettings settings(int scale, XbrMode mode) {
  const StageDescriptor* d = StageRegistry::instance().find("xbr");
  Params p = default_params(d->params);
  p.set("scale", int64_t(scale));
  p.set("mode", std::string(mode == XbrMode::exact ? "exact" : "threshold"));
  return xbr_settings_from(p);
}

void expect_cuda_equals_cpu(const HostImage& in, const std::string& what) {
  for (XbrMode mode : {XbrMode::exact, XbrMode::threshold}) {
    for (int n = 2; n <= 4; ++n) {
      SCOPED_TRACE(what + " " + std::to_string(in.width) + "x" + std::to_string(in.height) + " scale " +
                   std::to_string(n) + (mode == XbrMode::exact ? " exact" : " threshold") + " seed " +
                   std::to_string(fresh_seed()));
      XbrStage cpu(settings(n, mode)), gpu(settings(n, mode));
      const HostImage want = run_stage_cpu(cpu, in);
      const HostImage got = run_stage_cuda(gpu, in);
      const ImageDiff diff = compare(got, want);
      EXPECT_EQ(diff.differing_bytes, 0u) << "max abs " << diff.max_abs;
    }
  }
}

HostImage few_colour_noise(int w, int h, int colours, std::mt19937_64& rng) {
  std::vector<uint32_t> palette(colours);
  for (auto& c : palette) c = uint32_t(rng()) | 0xFF000000u;
  HostImage img(w, h);
  for (int i = 0; i < w * h; ++i) std::memcpy(&img.pixels[size_t(i) * 4], &palette[rng() % colours], 4);
  return img;
}

TEST(XbrCuda, MatchesCpuOnRandomAndOddSizes) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  // Sizes around the 32x8 tile: single pixels, partial tiles, many tiles.
  const int sizes[][2] = {{1, 1}, {2, 3}, {3, 2}, {1, 9}, {33, 1}, {31, 7}, {32, 8}, {33, 9}, {257, 241}};
  for (const auto& s : sizes) {
    expect_cuda_equals_cpu(random_image(s[0], s[1], rng), "random");
    expect_cuda_equals_cpu(few_colour_noise(s[0], s[1], 3, rng), "three-colour noise");
  }
}

TEST(XbrCuda, MatchesCpuOnPixelArt) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  expect_cuda_equals_cpu(synthetic_pixel_art(256, 240, 16, rng), "synthetic pixel art");
  expect_cuda_equals_cpu(synthetic_pixel_art(640, 360, 8, rng), "synthetic pixel art");
  for (const auto& f : pixel_art_files()) {
    const HostImage img = load_image_rgba(f);
    ASSERT_GT(img.width, 0) << f;
    expect_cuda_equals_cpu(img, f);
  }
}

TEST(XbrCuda, MatchesCpuOnLossyPixelArtAndPhotos) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const auto lossy = lossy_roundtrip({synthetic_pixel_art(256, 240, 16, rng), synthetic_pixel_art(256, 240, 5, rng)}, 28);
  ASSERT_EQ(lossy.size(), 2u);
  for (const auto& f : lossy) expect_cuda_equals_cpu(f, "lossy pixel art");
  expect_cuda_equals_cpu(synthetic_photo(1920, 1080, rng), "1080p photo");
}

// Pitches that are not multiples of the pixel row (nor of 16 bytes), and no
// writes outside the output rows.
TEST(XbrCuda, HonoursPitchesAndBounds) {
  SP_REQUIRE_CUDA();
  std::mt19937_64 rng(fresh_seed());
  const HostImage src = few_colour_noise(45, 19, 4, rng);
  for (int n = 2; n <= 4; ++n) {
    SCOPED_TRACE("scale " + std::to_string(n) + " seed " + std::to_string(fresh_seed()));
    const int ow = src.width * n, oh = src.height * n;
    const size_t in_pitch = size_t(src.width) * 4 + 20, out_pitch = size_t(ow) * 4 + 36;
    std::vector<uint8_t> in_host(in_pitch * src.height, 0x77), out_host(out_pitch * oh, 0x5A);
    for (int y = 0; y < src.height; ++y)
      std::memcpy(&in_host[y * in_pitch], &src.pixels[size_t(y) * src.pitch], src.pitch);
    std::vector<uint8_t> want_host = out_host;
    const XbrSettings s = settings(n, XbrMode::exact);
    std::vector<uint32_t> keys(size_t(src.width) * src.height);
    xbr_expand_cpu({in_host.data(), src.width, src.height, in_pitch}, {want_host.data(), ow, oh, out_pitch}, s,
                   keys.data(), nullptr);

    uint8_t *d_in = nullptr, *d_out = nullptr;
    cudaStream_t stream;
    SP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    SP_CUDA_CHECK(cudaMalloc(&d_in, in_host.size()));
    SP_CUDA_CHECK(cudaMalloc(&d_out, out_host.size()));
    SP_CUDA_CHECK(cudaMemcpyAsync(d_in, in_host.data(), in_host.size(), cudaMemcpyHostToDevice, stream));
    SP_CUDA_CHECK(cudaMemcpyAsync(d_out, out_host.data(), out_host.size(), cudaMemcpyHostToDevice, stream));
    xbr_expand_cuda({d_in, src.width, src.height, in_pitch}, {d_out, ow, oh, out_pitch}, s, stream);
    SP_CUDA_CHECK(cudaMemcpyAsync(out_host.data(), d_out, out_host.size(), cudaMemcpyDeviceToHost, stream));
    SP_CUDA_CHECK(cudaStreamSynchronize(stream));
    SP_CUDA_CHECK(cudaFree(d_in));
    SP_CUDA_CHECK(cudaFree(d_out));
    SP_CUDA_CHECK(cudaStreamDestroy(stream));
    // Whole buffers, padding included: the padding must still be 0x5A.
    EXPECT_EQ(out_host, want_host);
    EXPECT_EQ(out_host[out_pitch - 1], 0x5A);
  }
}

}  // namespace
}  // namespace sp::test
