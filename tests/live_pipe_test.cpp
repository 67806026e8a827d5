// Live mode as an emulator uses it: raw RGBA frames paced at 60 fps into
// stdin, raw frames out of stdout, every frame checked against the CPU
// reference of the same stage, latency read back from the stats.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "pipeline/params.h"
#include "pipeline/stage.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

constexpr int kWidth = 256, kHeight = 240, kFrames = 600, kScale = 2;

const char* const kSheets = "/usr/share/games/mirrormagic/graphics/gfx_classic/";

// A region of a real game's tile sheet (Debian's mirrormagic-data), opaque
// RGBA, through the ffmpeg CLI; empty when the package is missing.
HostImage load_sheet_region(const TempDir& dir, const std::string& sheet, int width, int height, int x, int y) {
  const std::string raw = dir.file("region.rgba");
  const CommandResult r = run_command("ffmpeg -v error -y -i " + std::string(kSheets) + sheet + " -vf crop=" +
                                      std::to_string(width) + ":" + std::to_string(height) + ":" + std::to_string(x) +
                                      ":" + std::to_string(y) + ",format=rgb24 -f rawvideo -pix_fmt rgba " + raw);
  HostImage img(width, height);
  std::ifstream in(raw, std::ios::binary);
  if (r.exit_code != 0 || !in.read(reinterpret_cast<char*>(img.pixels.data()), img.pixels.size())) return HostImage(0, 0);
  return img;
}

// A scrolling scene: a tile map plus a moving sprite, from a real game's
// graphics where installed (random regions of them), else synthetic.
std::vector<HostImage> make_scene(std::mt19937_64& rng) {
  TempDir dir;
  HostImage tiles = load_sheet_region(dir, "RocksElements.png", kWidth * 2, kHeight, 0, int(rng() % 241));
  HostImage sprite = load_sheet_region(dir, "RocksHeroes.png", 16, 16, 16 * int(rng() % 32), 16 * int(rng() % 8));
  if (tiles.width == 0 || sprite.width == 0) {
    std::printf("mirrormagic-data is not installed: synthetic pixel art instead\n");
    tiles = synthetic_pixel_art(kWidth * 2, kHeight, 12, rng);
    sprite = synthetic_pixel_art(16, 16, 4, rng);
  }
  std::vector<HostImage> frames;
  for (int f = 0; f < kFrames; ++f) {
    HostImage img(kWidth, kHeight);
    const int scroll = f % kWidth;
    for (int y = 0; y < kHeight; ++y)
      std::memcpy(img.view().row(y), tiles.view().row(y) + 4 * scroll, 4 * kWidth);
    const int sx = (f * 3) % (kWidth - 16), sy = 100 + int(20 * std::sin(f * 0.1));
    for (int y = 0; y < 16; ++y) std::memcpy(img.view().row(sy + y) + 4 * sx, sprite.view().row(y), 64);
    frames.push_back(std::move(img));
  }
  return frames;
}

bool write_all(int fd, const uint8_t* data, size_t n) {
  while (n) {
    const ssize_t w = write(fd, data, n);
    if (w <= 0) return false;
    data += w;
    n -= size_t(w);
  }
  return true;
}

bool read_all(int fd, uint8_t* data, size_t n) {
  while (n) {
    const ssize_t r = read(fd, data, n);
    if (r <= 0) return false;
    data += r;
    n -= size_t(r);
  }
  return true;
}

TEST(LivePipe, SixHundredFramesAt60FpsMatchTheCpuReference) {
  const StageDescriptor* xbr = StageRegistry::instance().find("xbr");
  if (!xbr) GTEST_SKIP() << "the xbr stage is not built";
  std::mt19937_64 rng(fresh_seed());
  const std::vector<HostImage> frames = make_scene(rng);
  TempDir dir;
  const std::string config = dir.file("live.yaml"), stats = dir.file("stats.json");
  std::ofstream(config) << "pipeline:\n  - xbr: {scale: " << kScale << "}\n";

  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    const std::string bin = stylepipe_binary();
    execl(bin.c_str(), bin.c_str(), "run", config.c_str(), "-f", "rawvideo", "--pix-fmt", "rgba", "--size", "256x240",
          "--rate", "60", "-i", "-", "-f", "rawvideo", "--pix-fmt", "rgba", "-o", "-", "--low-latency",
          "--progress", "none", "--stats-json", stats.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);

  std::thread producer([&] {
    auto next = std::chrono::steady_clock::now();
    for (const auto& f : frames) {
      std::this_thread::sleep_until(next);
      next += std::chrono::microseconds(16667);
      if (!write_all(to_child[1], f.pixels.data(), f.pixels.size())) break;
    }
    close(to_child[1]);
  });

  auto stage = xbr->create([&] {
    Params p = default_params(xbr->params);
    p.set("scale", int64_t(kScale));
    return p;
  }());
  const size_t out_bytes = size_t(kWidth * kScale) * kHeight * kScale * 4;
  HostImage got(kWidth * kScale, kHeight * kScale);
  int received = 0, mismatched = 0;
  for (; received < kFrames; ++received) {
    if (!read_all(from_child[0], got.pixels.data(), out_bytes)) break;
    const HostImage expected = run_stage_cpu(*stage, frames[received]);
    if (compare(got, expected).differing_bytes != 0) ++mismatched;
  }
  close(from_child[0]);
  producer.join();
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(received, kFrames);
  EXPECT_EQ(mismatched, 0) << "frames differing from the CPU reference";

  const nlohmann::json s = nlohmann::json::parse(std::ifstream(stats));
  EXPECT_EQ(s["frames"]["out"].get<int>(), kFrames);
  EXPECT_EQ(s["frames"]["dropped"].get<int>(), 0);
  const auto& latency = s["latency_ms"];
  EXPECT_EQ(latency["count"].get<int>(), kFrames);
  EXPECT_GT(latency["p50"].get<double>(), 0.0);
  EXPECT_GE(latency["p99"].get<double>(), latency["p50"].get<double>());
  EXPECT_GE(latency["max"].get<double>(), latency["p99"].get<double>());
  std::printf("live latency ms: p50 %.3f p99 %.3f max %.3f\n", latency["p50"].get<double>(),
              latency["p99"].get<double>(), latency["max"].get<double>());
}

}  // namespace
}  // namespace sp::test
