#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pipeline/device.h"
#include "pipeline/image.h"
#include "pipeline/stage.h"

namespace sp::test {

// Skips the current test, with the reason, where no CUDA device is usable.
#define SP_REQUIRE_CUDA()                                                        \
  do {                                                                           \
    std::string sp_why_;                                                         \
    if (!sp::cuda_device_available(&sp_why_))                                    \
      GTEST_SKIP() << "GPU test skipped: " << sp_why_;                           \
  } while (0)

// A fresh seed per process run (printed on failure), so tests see new inputs each time.
uint64_t fresh_seed();

// The CPUs the calling thread may run on (its affinity mask).
std::vector<int> allowed_cpus();
// Lets the calling thread (and what it starts from now on) run only on
// `cpus`; false where the system refused.
bool run_this_thread_on(const std::vector<int>& cpus);

// Host RGBA image with owned storage.
struct HostImage {
  std::vector<uint8_t> pixels;
  int width = 0, height = 0;
  size_t pitch = 0;
  HostImage() = default;
  HostImage(int w, int h) : pixels(size_t(w) * h * 4), width(w), height(h), pitch(size_t(w) * 4) {}
  RgbaView view() { return {pixels.data(), width, height, pitch}; }
  RgbaView view() const { return {const_cast<uint8_t*>(pixels.data()), width, height, pitch}; }
};

HostImage random_image(int w, int h, std::mt19937_64& rng);
// Smooth gradients plus shapes plus noise: photo-like, never constant.
HostImage synthetic_photo(int w, int h, std::mt19937_64& rng);
// Few-colour blocky image: pixel-art-like.
HostImage synthetic_pixel_art(int w, int h, int palette_size, std::mt19937_64& rng);

#if STYLEPIPE_HAS_CUDA
// Runs a stage on the GPU: uploads `in`, configures and processes on a fresh
// stream, downloads. Lets stage tests compare CUDA against the CPU path.
HostImage run_stage_cuda(Stage& stage, const HostImage& in, int64_t frame_index = 0);
#endif
HostImage run_stage_cpu(Stage& stage, const HostImage& in, int64_t frame_index = 0);

// Count of differing bytes, and max abs difference.
struct ImageDiff {
  size_t differing_bytes = 0;
  int max_abs = 0;
  double mean_abs = 0;
};
ImageDiff compare(const HostImage& a, const HostImage& b);

// The non-empty lines of a command's output.
std::vector<std::string> nonempty_lines(const std::string& text);

}  // namespace sp::test
