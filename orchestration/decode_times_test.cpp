// DecodeTimes against the decode times x264 itself gave (ffmpeg's CLI
// encodes, MP4 keeps them, ffprobe reads them), on random variable frame
// rates, starts and B-frame settings.
#include "orchestration/decode_times.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

// Adds every packet, taking each decode time as soon as it is ready, as the concat does.
std::vector<int64_t> derive(const std::vector<int64_t>& pts, int reorder_delay) {
  DecodeTimes times(reorder_delay);
  std::vector<int64_t> dts;
  for (int64_t t : pts) {
    times.add(t);
    while (times.ready()) dts.push_back(times.take());
  }
  times.finish();
  while (times.ready()) dts.push_back(times.take());
  return dts;
}

TEST(DecodeTimes, AreX264sOnRandomVariableRates) {
  std::mt19937_64 rng(fresh_seed() ^ 0xd75);
  const char* b_frames[] = {"-bf 3 -x264-params b-adapt=2", "-bf 2 -x264-params b-pyramid=none", "-bf 16", "-bf 0"};
  for (const char* settings : b_frames) {
    TempDir dir;
    const std::string clip = dir.file("vfr.mp4");
    // Irregular frame steps (at least step - wobble > 0), one long pause, a random start.
    const double step = 0.01 + double(rng() % 50) / 1000, wobble = step * double(rng() % 90) / 100;
    char filter[256];
    std::snprintf(filter, sizeof(filter), "settb=1/90000,setpts='(N*%.3f+%.4f*pow(sin(N*%d),2)+%.2f*gte(N,%d))/TB'",
                  step, wobble, 1 + int(rng() % 7), double(rng() % 300) / 100, int(rng() % 40));
    const int frames = 3 + int(rng() % 120);
    const CommandResult r = run_command(
        "ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v " + std::to_string(frames) +
        " -vf \"" + filter + "\" -fps_mode vfr -enc_time_base 1/90000 -c:v libx264 -preset medium " + settings + " -g " +
        std::to_string(4 + rng() % 60) + " -output_ts_offset " + std::to_string(double(rng() % 3000) / 1000) + " " +
        shell_quote(clip));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const VideoPacketTimes x264 = video_packet_times(clip);
    SCOPED_TRACE(testing::Message() << settings << ", " << filter << ", " << frames << " frames, reorder delay "
                                    << x264.has_b_frames);
    ASSERT_EQ(x264.pts.size(), size_t(frames));
    const std::vector<int64_t> derived = derive(x264.pts, x264.has_b_frames);
    ASSERT_EQ(derived.size(), x264.dts.size());
    for (size_t i = 0; i < derived.size(); ++i) ASSERT_EQ(x264.dts[i], derived[i]) << "packet " << i;
  }
}

TEST(DecodeTimes, StreamsShorterThanTheDelayAreDecodedAsShown) {
  std::mt19937_64 rng(fresh_seed() ^ 0x5d7);
  const int delay = 1 + int(rng() % 4);
  std::vector<int64_t> pts;
  for (int64_t t = int64_t(rng() % 1000); int(pts.size()) < delay; t += 1 + int64_t(rng() % 50)) pts.push_back(t);
  EXPECT_EQ(derive(pts, delay), pts);
  EXPECT_TRUE(derive({}, delay).empty());
}

TEST(DecodeTimes, WaitForTheFrameThatSetsTheFirstDecodeTimes) {
  DecodeTimes times(2);
  // I0 P3 B2 b1 P6: the first two decode times need frame 2's time, known after the fifth packet.
  const int64_t pts[] = {0, 30, 20, 10, 60};
  for (int i = 0; i < 4; ++i) {
    times.add(pts[i]);
    EXPECT_FALSE(times.ready()) << "packet " << i;
  }
  times.add(pts[4]);
  std::vector<int64_t> dts;
  while (times.ready()) dts.push_back(times.take());
  EXPECT_EQ(dts, (std::vector<int64_t>{-20, -10, 0, 10, 20}));
}

}  // namespace
}  // namespace sp::test
