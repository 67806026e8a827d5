// A `--jobs` run keeps the encoder's B-frames as a single run does, and costs
// no more bytes for its seams than their keyframes: checked with ffprobe on
// random variable-rate clips that start late.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

// Irregular frame steps (each at least step - wobble > 0), a tone, keyframes
// every second or so, the first frame at a random time after 0. Empty where
// this FFmpeg has no settb filter (the GPU machines' static kit).
std::string make_variable_rate_clip(const TempDir& dir, std::mt19937_64& rng) {
  const std::string path = dir.file(rng() % 2 ? "in.mp4" : "in.mkv");
  const double step = 0.025 + double(rng() % 20) / 1000, wobble = step * double(rng() % 80) / 100;
  const int frames = 200 + int(rng() % 80);
  char command[1024];
  std::snprintf(command, sizeof(command),
                "ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=%dx%d:rate=25 -f lavfi -i "
                "sine=frequency=%d:sample_rate=48000:duration=%.2f -frames:v %d "
                "-vf \"settb=1/90000,setpts='(N*%.3f+%.4f*pow(sin(N*%d),2))/TB'\" -fps_mode vfr "
                "-enc_time_base 1/90000 -c:v libx264 -preset veryfast -g %d -pix_fmt yuv420p -c:a aac "
                "-output_ts_offset %.3f %s",
                256 + 16 * int(rng() % 8), 144 + 16 * int(rng() % 6), 200 + int(rng() % 1000), frames * step, frames,
                step, wobble, 1 + int(rng() % 7), 20 + int(rng() % 20), 0.1 + double(rng() % 3000) / 1000,
                shell_quote(path).c_str());
  const CommandResult r = run_command(command);
  if (r.output.find("No such filter: 'settb'") != std::string::npos) return {};
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
  return path;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(SegmentsE2E, JobsRunKeepsTheSingleRunsBFramesInMp4AndMkv) {
  std::mt19937_64 rng(fresh_seed() ^ 0xbf);
  TempDir dir;
  const std::string in = make_variable_rate_clip(dir, rng);
  if (in.empty()) GTEST_SKIP() << "this FFmpeg has no settb filter to make the variable-rate clip (the GPU machines' static kit)";
  const std::vector<double> in_times = video_frame_times(in);
  ASSERT_GT(in_times.size(), 100u);
  ASSERT_GT(in_times.front(), 0.05) << "the input should start late";
  const int segments = 3 + int(rng() % 3);
  for (const std::string container : {"mp4", "mkv"}) {
    SCOPED_TRACE(in + " into " + container + ", " + std::to_string(segments) + " segments");
    const std::string single = dir.file("single." + container), split = dir.file("split." + container);
    const std::string options = "--preset medium --codec libx264 --backend cpu";
    CommandResult r = stylepipe("run " + identity_config() + " -i " + in + " -o " + single + " " + options);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = stylepipe("run " + identity_config() + " -i " + in + " -o " + split + " " + options + " --jobs 3 --segments " +
                  std::to_string(segments));
    ASSERT_EQ(r.exit_code, 0) << r.output;

    const VideoPacketTimes one = video_packet_times(single), joined = video_packet_times(split);
    ASSERT_GT(one.has_b_frames, 0) << "preset medium has B-frames";
    EXPECT_EQ(joined.has_b_frames, one.has_b_frames);
    size_t decoded_before_shown = 0;
    for (size_t i = 0; i < joined.pts.size(); ++i) decoded_before_shown += joined.dts[i] && *joined.dts[i] < joined.pts[i];
    EXPECT_GT(decoded_before_shown, joined.pts.size() / 4) << "B-frames put most frames' decoding before their showing";
    ASSERT_EQ(joined.pts.size(), in_times.size());
    EXPECT_EQ(sorted(joined.pts), sorted(one.pts)) << "presentation times differ from the single run";
    std::optional<int64_t> previous;
    for (size_t i = 0; i < joined.dts.size(); ++i) {
      if (!joined.dts[i]) continue;
      ASSERT_LE(*joined.dts[i], joined.pts[i]) << "packet " << i;
      if (previous) {
        ASSERT_LT(*previous, *joined.dts[i]) << "decode times must increase: packet " << i;
      }
      previous = joined.dts[i];
    }
    EXPECT_EQ(decoded_video_frames(split), int(in_times.size()));
    EXPECT_EQ(audio_packet_hashes(split), audio_packet_hashes(single)) << "audio packets differ";

    const double ratio = double(std::filesystem::file_size(split)) / double(std::filesystem::file_size(single));
    std::printf("%s: %d segments are %.4f times the single run's size (%ju and %ju bytes)\n", container.c_str(),
                segments, ratio, uintmax_t(std::filesystem::file_size(split)),
                uintmax_t(std::filesystem::file_size(single)));
    EXPECT_LT(ratio, 1.05) << "the seams' keyframes cost a little; B-frames lost would cost ~10 %";
    EXPECT_GT(ratio, 0.95);
  }
}

}  // namespace
}  // namespace sp::test
