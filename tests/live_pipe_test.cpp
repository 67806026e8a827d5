// Live mode as an emulator uses it: raw RGBA frames paced at 60 fps into
// stdin, raw frames out of stdout, every frame checked against the CPU
// reference of the same stage, latency read back from the stats.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

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

// stylepipe with stdin and stdout on pipes: `to` feeds it, `from` reads it.
struct LiveChild {
  pid_t pid = -1;
  int to = -1, from = -1;
};

LiveChild start_live(const std::vector<std::string>& args) {
  int to_child[2], from_child[2];
  LiveChild c;
  if (pipe(to_child) != 0 || pipe(from_child) != 0) return c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    const std::string bin = stylepipe_binary();
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  c.to = to_child[1];
  c.from = from_child[0];
  return c;
}

std::vector<std::string> live_args(const std::string& config, const std::string& stats) {
  return {"run", config, "-f", "rawvideo", "--pix-fmt", "rgba", "--size", "256x240", "--rate", "60", "-i", "-",
          "--low-latency", "--progress", "none", "--stats-json", stats, "-o", "-"};
}

// Writes the frames at 60 fps, then closes the input.
std::thread pace_frames(const std::vector<HostImage>& frames, int fd) {
  return std::thread([&frames, fd] {
    auto next = std::chrono::steady_clock::now();
    for (const auto& f : frames) {
      std::this_thread::sleep_until(next);
      next += std::chrono::microseconds(16667);
      if (!write_all(fd, f.pixels.data(), f.pixels.size())) break;
    }
    close(fd);
  });
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The latency and its per-frame timeline in --stats-json, for every frame.
void expect_live_stats(const std::string& stats_path) {
  const nlohmann::json s = nlohmann::json::parse(std::ifstream(stats_path));
  EXPECT_EQ(s["frames"]["out"].get<int>(), kFrames);
  EXPECT_EQ(s["frames"]["dropped"].get<int>(), 0);
  const auto& latency = s["latency_ms"];
  EXPECT_EQ(latency["count"].get<int>(), kFrames);
  EXPECT_GT(latency["p50"].get<double>(), 0.0);
  EXPECT_GE(latency["p99"].get<double>(), latency["p50"].get<double>());
  EXPECT_GE(latency["max"].get<double>(), latency["p99"].get<double>());
  std::printf("live latency ms: p50 %.3f p99 %.3f max %.3f\n", latency["p50"].get<double>(),
              latency["p99"].get<double>(), latency["max"].get<double>());

  const auto& timeline = s["timeline"];
  EXPECT_EQ(timeline["frames"].get<int>(), kFrames);
  EXPECT_EQ(timeline["steps_ms"]["latency"]["count"].get<int>(), kFrames);
  EXPECT_DOUBLE_EQ(timeline["steps_ms"]["latency"]["max"].get<double>(), latency["max"].get<double>());
  const auto& worst = timeline["worst"];
  ASSERT_EQ(worst.size(), 10u);
  EXPECT_DOUBLE_EQ(worst[0]["latency_ms"].get<double>(), latency["max"].get<double>());
  for (size_t i = 0; i < worst.size(); ++i) {
    const auto& w = worst[i];
    if (i > 0) {
      EXPECT_LE(w["latency_ms"].get<double>(), worst[i - 1]["latency_ms"].get<double>());
    }
    // The steps from read to written make up the latency; none is negative.
    const double parts = w["read_to_taken_ms"].get<double>() + w["taken_to_processed_ms"].get<double>() +
                         w["processed_to_write_ms"].get<double>() + w["write_ms"].get<double>();
    EXPECT_NEAR(parts, w["latency_ms"].get<double>(), 1e-6);
    for (const char* step : {"arrival_to_read_ms", "read_to_taken_ms", "taken_to_processed_ms",
                             "processed_to_write_ms", "write_ms"})
      EXPECT_GE(w[step].get<double>(), 0.0) << step;
    EXPECT_GE(w["arrival_to_written_ms"].get<double>(), w["latency_ms"].get<double>());
    EXPECT_LT(w["frame"].get<int>(), kFrames);
  }
  std::printf("worst frame %d: arrival->read %.3f, processing %.3f, write %.3f ms\n", worst[0]["frame"].get<int>(),
              worst[0]["arrival_to_read_ms"].get<double>(), worst[0]["taken_to_processed_ms"].get<double>(),
              worst[0]["write_ms"].get<double>());
}

const StageDescriptor* xbr_stage() { return StageRegistry::instance().find("xbr"); }

std::string write_xbr_config(const TempDir& dir) {
  const std::string config = dir.file("live.yaml");
  std::ofstream(config) << "pipeline:\n  - xbr: {scale: " << kScale << "}\n";
  return config;
}

TEST(LivePipe, SixHundredFramesAt60FpsMatchTheCpuReference) {
  const StageDescriptor* xbr = xbr_stage();
  if (!xbr) GTEST_SKIP() << "the xbr stage is not built";
  std::mt19937_64 rng(fresh_seed());
  const std::vector<HostImage> frames = make_scene(rng);
  TempDir dir;
  const std::string config = write_xbr_config(dir), stats = dir.file("stats.json");
  std::vector<std::string> args = live_args(config, stats);
  args.insert(args.end() - 2, {"-f", "rawvideo", "--pix-fmt", "rgba"});
  const LiveChild child = start_live(args);
  ASSERT_GT(child.pid, 0);
  std::thread producer = pace_frames(frames, child.to);

  auto stage = xbr->create([&] {
    Params p = default_params(xbr->params);
    p.set("scale", int64_t(kScale));
    return p;
  }());
  const size_t out_bytes = size_t(kWidth * kScale) * kHeight * kScale * 4;
  HostImage got(kWidth * kScale, kHeight * kScale);
  int received = 0, mismatched = 0;
  for (; received < kFrames; ++received) {
    if (!read_all(child.from, got.pixels.data(), out_bytes)) break;
    const HostImage expected = run_stage_cpu(*stage, frames[received]);
    const auto differing = compare(got, expected).differing_bytes;
    if (differing == 0) continue;
    // Which frame it is instead, if any: a picture reused under the reader
    // shows a later frame, at least in part.
    std::string instead = "no other frame";
    for (int k = std::max(0, received - 3); k < std::min(kFrames, received + 8); ++k)
      if (k != received && compare(got, run_stage_cpu(*stage, frames[k])).differing_bytes < differing)
        instead = "closer to frame " + std::to_string(k);
    ADD_FAILURE() << "frame " << received << ": " << differing << " bytes differ (" << instead << ")";
    ++mismatched;
  }
  close(child.from);
  producer.join();
  EXPECT_EQ(exit_status(child.pid), 0);
  EXPECT_EQ(received, kFrames);
  EXPECT_EQ(mismatched, 0) << "frames differing from the CPU reference";
  expect_live_stats(stats);
}

// y4m to a pipe: the header, then each frame whole ("FRAME" and its planes),
// as a player reads it. The live pipe splices the frames past FFmpeg's y4m
// muxer; the oracle is that muxer itself: the same frames from a file into a
// .y4m file must give the same bytes.
TEST(LivePipe, Y4mOutputEqualsFfmpegsMuxerFrameForFrame) {
  if (!xbr_stage()) GTEST_SKIP() << "the xbr stage is not built";
  std::mt19937_64 rng(fresh_seed());
  const std::vector<HostImage> frames = make_scene(rng);
  TempDir dir;
  const std::string config = write_xbr_config(dir), stats = dir.file("stats.json");
  const std::string input = dir.file("in.rgba"), reference = dir.file("reference.y4m");
  {
    std::ofstream raw(input, std::ios::binary);
    for (const HostImage& f : frames) raw.write(reinterpret_cast<const char*>(f.pixels.data()), f.pixels.size());
  }
  const CommandResult ref = run_command(shell_quote(stylepipe_binary()) + " run " + shell_quote(config) +
                                        " -f rawvideo --pix-fmt rgba --size 256x240 --rate 60 -i " +
                                        shell_quote(input) + " --progress none -o " + shell_quote(reference));
  ASSERT_EQ(ref.exit_code, 0) << ref.output;
  std::ifstream expected(reference, std::ios::binary);
  std::string expected_header;
  ASSERT_TRUE(std::getline(expected, expected_header));

  std::vector<std::string> args = live_args(config, stats);
  args.insert(args.end() - 2, {"-f", "yuv4mpegpipe"});
  const LiveChild child = start_live(args);
  ASSERT_GT(child.pid, 0);
  std::thread producer = pace_frames(frames, child.to);

  std::string header;
  for (char c = 0; header.size() < 200 && read(child.from, &c, 1) == 1 && c != '\n';) header += c;
  const int w = kWidth * kScale, h = kHeight * kScale;
  EXPECT_EQ(header.rfind("YUV4MPEG2 W" + std::to_string(w) + " H" + std::to_string(h) + " F60:1", 0), 0u) << header;
  EXPECT_EQ(header, expected_header);
  // Chroma planes by the header's colour space tag (C444, C420..., default 4:2:0).
  const bool full_chroma = header.find(" C444") != std::string::npos;
  const size_t picture = size_t(w) * h + 2 * (full_chroma ? size_t(w) * h : size_t(w / 2) * (h / 2));
  std::vector<uint8_t> frame(6 + picture), want(frame.size());
  int received = 0, mismatched = 0;
  for (; received < kFrames; ++received) {
    if (!read_all(child.from, frame.data(), frame.size())) break;
    if (std::memcmp(frame.data(), "FRAME\n", 6) != 0) break;
    if (!expected.read(reinterpret_cast<char*>(want.data()), std::streamsize(want.size())) || frame != want)
      ++mismatched;
  }
  uint8_t extra = 0;
  const bool more = read(child.from, &extra, 1) > 0;
  close(child.from);
  producer.join();
  EXPECT_EQ(exit_status(child.pid), 0);
  EXPECT_EQ(received, kFrames);
  EXPECT_EQ(mismatched, 0) << "frames differing from FFmpeg's y4m muxer";
  EXPECT_FALSE(more) << "bytes after the last frame";
  expect_live_stats(stats);
}

// drop-oldest keeps a reader thread ahead of the rest: frames fed as fast as
// the pipe takes them are written or counted as dropped, and the timeline
// covers each written one.
TEST(LivePipe, DropOldestAccountsForEveryFrame) {
  if (!xbr_stage()) GTEST_SKIP() << "the xbr stage is not built";
  std::mt19937_64 rng(fresh_seed());
  const std::vector<HostImage> frames = make_scene(rng);
  TempDir dir;
  const std::string config = write_xbr_config(dir), stats = dir.file("stats.json");
  std::vector<std::string> args = live_args(config, stats);
  args.insert(args.end() - 2, {"-f", "rawvideo", "--pix-fmt", "rgba", "--drop-policy", "drop-oldest"});
  const LiveChild child = start_live(args);
  ASSERT_GT(child.pid, 0);
  std::thread producer([&] {
    for (const auto& f : frames)
      if (!write_all(child.to, f.pixels.data(), f.pixels.size())) break;
    close(child.to);
  });
  std::vector<uint8_t> picture(size_t(kWidth * kScale) * kHeight * kScale * 4);
  int received = 0;
  while (read_all(child.from, picture.data(), picture.size())) ++received;
  close(child.from);
  producer.join();
  EXPECT_EQ(exit_status(child.pid), 0);
  const nlohmann::json s = nlohmann::json::parse(std::ifstream(stats));
  EXPECT_EQ(s["frames"]["in"].get<int>(), kFrames);
  EXPECT_EQ(s["frames"]["out"].get<int>(), received);
  EXPECT_EQ(s["frames"]["out"].get<int>() + s["frames"]["dropped"].get<int>(), kFrames);
  EXPECT_EQ(s["timeline"]["frames"].get<int>(), received);
  EXPECT_EQ(s["timeline"]["steps_ms"]["latency"]["count"].get<int>(), received);
}

// Ctrl-C while the source sends nothing (a paused emulator) ends the run;
// it does not wait in the pipe for a frame that may never come.
TEST(LivePipe, InterruptWhileTheSourceIsSilentEndsTheRun) {
  std::mt19937_64 rng(fresh_seed());
  const HostImage frame = synthetic_pixel_art(kWidth, kHeight, 8, rng);
  TempDir dir;
  std::vector<std::string> args = live_args(identity_config(), dir.file("stats.json"));
  args.insert(args.end() - 2, {"-f", "rawvideo", "--pix-fmt", "rgba"});
  const LiveChild child = start_live(args);
  ASSERT_GT(child.pid, 0);
  // One frame through shows the run is past its start-up and waiting for the next.
  ASSERT_TRUE(write_all(child.to, frame.pixels.data(), frame.pixels.size()));
  std::vector<uint8_t> out(frame.pixels.size());
  ASSERT_TRUE(read_all(child.from, out.data(), out.size()));
  EXPECT_EQ(out, frame.pixels);
  kill(child.pid, SIGINT);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 1000 && done == 0; ++i) {  // up to 10 s, the source still open
    done = waitpid(child.pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const bool ended_with_source_open = done == child.pid;
  close(child.to);
  close(child.from);
  if (done == 0) done = waitpid(child.pid, &status, 0);
  EXPECT_TRUE(ended_with_source_open) << "the run waited for the source to close its pipe";
  ASSERT_EQ(done, child.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "status " << status;
}

// Ctrl-C before the source has sent a byte (an emulator not started yet)
// ends the run too: FFmpeg's open would otherwise sit in read() until data
// comes, since the signal handler restarts system calls.
TEST(LivePipe, InterruptBeforeTheSourceSendsAnythingEndsTheRun) {
  TempDir dir;
  std::vector<std::string> args = live_args(identity_config(), dir.file("stats.json"));
  args.insert(args.end() - 2, {"-f", "rawvideo", "--pix-fmt", "rgba"});
  const LiveChild child = start_live(args);
  ASSERT_GT(child.pid, 0);
  // SIGINT only once the run catches it (SigCgt in /proc: bit 1 is SIGINT),
  // however slowly a sanitizer build starts.
  const auto catches_sigint = [&] {
    std::ifstream status_file("/proc/" + std::to_string(child.pid) + "/status");
    for (std::string line; std::getline(status_file, line);)
      if (line.rfind("SigCgt:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) & 0x2) != 0;
    return false;
  };
  for (int i = 0; i < 1000 && !catches_sigint(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // and is on its way to the open
  kill(child.pid, SIGINT);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 500 && done == 0; ++i) {  // up to 5 s, the source still open and silent
    done = waitpid(child.pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const bool ended_with_source_open = done == child.pid;
  uint8_t byte = 0;
  const bool wrote = ended_with_source_open && read(child.from, &byte, 1) > 0;
  close(child.to);
  close(child.from);
  if (done == 0) done = waitpid(child.pid, &status, 0);
  EXPECT_TRUE(ended_with_source_open) << "the run waited for the source's first bytes";
  ASSERT_EQ(done, child.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "status " << status;
  EXPECT_FALSE(wrote) << "output without input";
}

// A live output opens before the first frame arrives; an input that ends
// without one is still no video.
TEST(LivePipe, InputWithoutFramesIsADataError) {
  TempDir dir;
  const std::string out = dir.file("out.y4m"), log = dir.file("log.txt");
  // In a subshell: run_command's own 2>&1 must not send the messages into the output.
  const CommandResult r = run_command(std::string("(") + shell_quote(stylepipe_binary()) + " run " +
                                      shell_quote(identity_config()) +
                                      " -f rawvideo --pix-fmt rgba --size 256x240 --rate 60 -i - --low-latency"
                                      " --progress none -f yuv4mpegpipe -o - < /dev/null 2> " + shell_quote(log) +
                                      " > " + shell_quote(out) + ")");
  std::ifstream log_file(log);
  const std::string messages((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(r.exit_code, 65) << messages;
  EXPECT_NE(messages.find("no video frames were decoded"), std::string::npos) << messages;
  std::ifstream written(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find("FRAME"), std::string::npos) << "a frame out of no input";
}

}  // namespace
}  // namespace sp::test
