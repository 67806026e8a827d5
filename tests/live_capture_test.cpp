// Screen capture through libavdevice (x11grab), as an emulator user on a
// desktop would run it, against a virtual X server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

TEST(LiveCapture, X11GrabRegionThroughXbr) {
  if (run_command("command -v Xvfb").exit_code != 0) GTEST_SKIP() << "Xvfb is not installed (scripts/install-deps.sh installs it)";
  std::mt19937_64 rng(fresh_seed());
  const int display = 90 + int(rng() % 400);
  // -wr: a white root window, so that a capture of nothing (zeros) shows.
  const std::string screen = std::string(":") + std::to_string(display);
  // Started in the background; ready once ffmpeg can grab a picture from it (at most ~10 s on a busy machine).
  run_command("(Xvfb " + screen + " -screen 0 320x240x24 -wr -nolisten tcp >/dev/null 2>&1 &) ; for i in $(seq 100); do "
              "ffmpeg -v quiet -f x11grab -i " + screen + " -frames:v 1 -f null - && break; sleep 0.1; done");
  TempDir dir;
  const std::string config = dir.file("x.yaml"), out = dir.file("grab.nut"), raw = dir.file("grab.rgb");
  std::ofstream(config) << "pipeline:\n  - xbr: {scale: 2}\n";
  const int w = 16 + int(rng() % 100), h = 16 + int(rng() % 100);
  const CommandResult r = stylepipe("run " + config + " -f x11grab --size " + std::to_string(w) + "x" +
                                    std::to_string(h) + " --rate 30 -i " + screen + "+10,20 -o " + out +
                                    " --frames 12 --codec rawvideo");
  run_command("pkill -f 'Xvfb " + screen + " '");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(decoded_video_frames(out), 12);
  // passthrough: rawvideo is a constant-rate output to ffmpeg, which would
  // repeat a frame over a gap in the capture's wall-clock timestamps (a busy
  // machine): 13 frames out of 12 once.
  ASSERT_EQ(run_command("ffmpeg -v error -i " + out + " -vsync passthrough -f rawvideo -pix_fmt rgb24 " + raw).exit_code, 0);
  std::ifstream in(raw, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), size_t(12) * (2 * w) * (2 * h) * 3) << "12 frames of the region, doubled";
  EXPECT_EQ(bytes.find_first_not_of('\xff'), std::string::npos) << "the white screen, captured";
}

}  // namespace
}  // namespace sp::test
