#include "tests/support/test_support.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "pipeline/buffer_pool.h"
#include "pipeline/stage.h"

namespace sp::test {

uint64_t fresh_seed() {
  static const uint64_t seed = [] {
    if (const char* s = std::getenv("SP_TEST_SEED")) return static_cast<uint64_t>(std::strtoull(s, nullptr, 10));
    return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return seed;
}

HostImage random_image(int w, int h, std::mt19937_64& rng) {
  HostImage img(w, h);
  for (auto& b : img.pixels) b = static_cast<uint8_t>(rng());
  return img;
}

HostImage synthetic_photo(int w, int h, std::mt19937_64& rng) {
  HostImage img(w, h);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double fx = 1 + 4 * u(rng), fy = 1 + 4 * u(rng), phase = 6.28 * u(rng);
  const double cx = w * u(rng), cy = h * u(rng), r = std::max(2.0, 0.3 * std::min(w, h) * (0.5 + u(rng)));
  std::normal_distribution<double> noise(0.0, 6.0);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double gx = double(x) / std::max(1, w - 1), gy = double(y) / std::max(1, h - 1);
      double rch = 40 + 170 * gx + 30 * std::sin(fx * 6.28 * gy + phase);
      double gch = 60 + 120 * gy + 40 * std::cos(fy * 6.28 * gx);
      double bch = 200 - 150 * gx * gy;
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r) {
        rch = 230 - rch * 0.5;
        gch *= 0.4;
      }
      if ((x / 16 + y / 16) % 7 == 0) bch = 30;  // hard edges
      uint8_t* p = img.pixels.data() + (size_t(y) * w + x) * 4;
      auto clamp8 = [](double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 255.0))); };
      p[0] = clamp8(rch + noise(rng));
      p[1] = clamp8(gch + noise(rng));
      p[2] = clamp8(bch + noise(rng));
      p[3] = 255;
    }
  }
  return img;
}

HostImage synthetic_pixel_art(int w, int h, int palette_size, std::mt19937_64& rng) {
  std::vector<uint32_t> palette(std::max(2, palette_size));
  for (auto& c : palette) c = static_cast<uint32_t>(rng()) | 0xFF000000u;
  HostImage img(w, h);
  auto* px = reinterpret_cast<uint32_t*>(img.pixels.data());
  for (int i = 0; i < w * h; ++i) px[i] = palette[0];
  // Random rectangles, diagonal lines and single pixels: the patterns xBR reacts to.
  std::uniform_int_distribution<int> pick(0, int(palette.size()) - 1);
  const int shapes = 4 + (w * h) / 64;
  for (int s = 0; s < shapes; ++s) {
    const uint32_t c = palette[pick(rng)];
    const int x0 = int(rng() % w), y0 = int(rng() % h);
    switch (rng() % 3) {
      case 0: {
        const int rw = 1 + int(rng() % std::max(1, w / 4)), rh = 1 + int(rng() % std::max(1, h / 4));
        for (int y = y0; y < std::min(h, y0 + rh); ++y)
          for (int x = x0; x < std::min(w, x0 + rw); ++x) px[y * w + x] = c;
        break;
      }
      case 1: {
        const int len = 1 + int(rng() % std::max(1, std::min(w, h)));
        const int dx = (rng() & 1) ? 1 : -1;
        for (int i = 0; i < len; ++i) {
          const int x = x0 + dx * i, y = y0 + i;
          if (x >= 0 && x < w && y < h) px[y * w + x] = c;
        }
        break;
      }
      default: px[y0 * w + x0] = c;
    }
  }
  return img;
}

namespace {

// Scratch memory for one test-run stage; freed when the test's run ends.
struct TestRun {
  BufferPool pool;
};

}  // namespace

HostImage run_stage_cpu(Stage& stage, const HostImage& in, int64_t frame_index) {
  static TestRun run;
  PooledScratch scratch(run.pool, MemoryKind::host);
  const Size out_size = stage.configure(in.view().size(), Backend::cpu, scratch);
  HostImage out(out_size.width, out_size.height);
  std::memset(out.pixels.data(), 0xA5, out.pixels.size());
  FrameInfo info;
  info.index = frame_index;
  stage.process_cpu(in.view(), out.view(), info);
  return out;
}

ImageDiff compare(const HostImage& a, const HostImage& b) {
  ImageDiff d;
  if (a.width != b.width || a.height != b.height) {
    d.differing_bytes = SIZE_MAX;
    d.max_abs = 255;
    return d;
  }
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    const int diff = std::abs(int(a.pixels[i]) - int(b.pixels[i]));
    if (diff) ++d.differing_bytes;
    d.max_abs = std::max(d.max_abs, diff);
    sum += diff;
  }
  d.mean_abs = a.pixels.empty() ? 0 : sum / a.pixels.size();
  return d;
}

std::vector<std::string> nonempty_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

bool run_this_thread_on(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

}  // namespace sp::test
