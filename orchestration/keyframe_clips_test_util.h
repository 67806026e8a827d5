#pragma once
// Clips made by the ffmpeg CLI and ffprobe's view of their packets: the
// fixtures and the oracle of the keyframe scan and segment choice tests.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test::keyframe_clips {

inline CommandResult run_ffmpeg(const std::string& args) {
  return run_command("ffmpeg -hide_banner -v error -y " + args);
}

struct ClipSpec {
  double seconds = 4;
  int rate = 25;
  int gop = 25;
  int bframes = 0;
  bool open_gop = false;
  bool audio = false;
  std::string extra;  // more output options: timestamps, containers
};

inline std::string make_clip(const TempDir& dir, const std::string& name, const ClipSpec& spec) {
  const std::string path = dir.file(name);
  std::string x264 = "scenecut=0";  // keyframes where the GOP says, so tests can count them
  if (spec.open_gop) x264 += ":open-gop=1";
  const std::string audio = spec.audio ? " -f lavfi -i sine=frequency=500:sample_rate=48000 -c:a aac" : "";
  const CommandResult r = run_ffmpeg(fmt::format(
      "-f lavfi -i testsrc2=size=96x64:rate={}{} -t {} -c:v libx264 -preset veryfast -pix_fmt yuv420p -g {} -bf {} "
      "-x264-params {} {} {}",
      spec.rate, audio, spec.seconds, spec.gop, spec.bframes, x264, spec.extra, shell_quote(path)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

// A clip a --jobs 3 run cuts in three (GOPs of 5 to 29 frames over 6 to 10
// s), with B-frames and open GOPs at random, and audio.
inline ClipSpec random_three_segment_spec(std::mt19937_64& rng) {
  ClipSpec spec;
  spec.seconds = 6 + double(rng() % 40) / 10;
  spec.gop = 5 + int(rng() % 25);
  spec.bframes = int(rng() % 4);
  spec.open_gop = rng() % 2;
  spec.audio = true;
  return spec;
}

inline std::string remux(const TempDir& dir, const std::string& in, const std::string& name, const std::string& options = "") {
  const std::string out = dir.file(name);
  const CommandResult r = run_ffmpeg("-i " + shell_quote(in) + " -c copy " + options + " " + shell_quote(out));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return out;
}

struct ProbedPacket {
  int64_t pts = 0;
  bool key = false;
  bool discard = false;  // before an edit list's start: decoded, never shown
};

// The video packets in the order the demuxer gives them (decode order).
inline std::vector<ProbedPacket> probe_video_packets(const std::string& file) {
  const CommandResult r = run_command(
      "ffprobe -v error -select_streams v:0 -show_entries packet=pts,flags -of csv=p=0 " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::vector<ProbedPacket> packets;
  for (const std::string& line : nonempty_lines(r.output)) {
    const size_t comma = line.find(',');
    EXPECT_NE(comma, std::string::npos) << line;
    if (comma == std::string::npos) continue;
    EXPECT_NE(line.substr(0, comma), "N/A") << file << ": a packet without pts";
    const std::string flags = line.substr(comma + 1, line.find(',', comma + 1) - comma - 1);
    packets.push_back({std::stoll(line.substr(0, comma)), flags.find('K') != std::string::npos,
                       flags.find('D') != std::string::npos});
  }
  return packets;
}

// An environment variable set for a scope; the processes a test starts see it too.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline double probe_start_seconds(const std::string& file) {
  const CommandResult r =
      run_command("ffprobe -v error -show_entries format=start_time -of csv=p=0 " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return std::stod(r.output);
}

}  // namespace sp::test::keyframe_clips
