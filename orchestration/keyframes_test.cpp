// scan_keyframes on clips made by ffmpeg, against ffprobe's key packets as
// the oracle; random GOP sizes, B-frames and lengths each run.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>

#include "orchestration/keyframe_clips_test_util.h"
#include "orchestration/keyframes.h"
#include "pipeline/errors.h"

namespace sp::test {
// Fixture helpers of another test file may share names: each set has its own namespace.
using namespace keyframe_clips;
namespace {

// The scan's keyframes are ffprobe's key packets, with their decode-order
// positions where the scan counted them, and its frame count is that of the
// packets that are shown.
void expect_matches_ffprobe(const std::string& file, const KeyframeScan& scan) {
  SCOPED_TRACE(file + " (keyframes from the " + scan.source + ")");
  const std::vector<ProbedPacket> packets = probe_video_packets(file);
  std::vector<Keyframe> expected;
  for (size_t i = 0; i < packets.size(); ++i)
    if (packets[i].key) expected.push_back({packets[i].pts, int64_t(i)});
  ASSERT_EQ(scan.keyframes.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(scan.keyframes[i].pts, expected[i].pts) << "keyframe " << i;
    if (scan.keyframes[i].frames_before >= 0) {
      EXPECT_EQ(scan.keyframes[i].frames_before, expected[i].frames_before) << "keyframe " << i;
    }
  }
  if (scan.frame_count >= 0) {
    const auto shown = std::count_if(packets.begin(), packets.end(), [](const ProbedPacket& p) { return !p.discard; });
    EXPECT_EQ(scan.frame_count, shown);
  }
  EXPECT_GT(scan.frame_rate.num, 0);
  EXPECT_GT(scan.frame_rate.den, 0);
  EXPECT_NEAR(scan.start_seconds, probe_start_seconds(file), 1e-3);
}

// NUT's index can leave out the last keyframe, so NUT files come either way.
enum class Source { index, packets, either };

KeyframeScan scan_and_check(const std::string& file, Source expected) {
  const KeyframeScan scan = scan_keyframes(file);
  if (expected == Source::either)
    EXPECT_TRUE(scan.source == "index" || scan.source == "packets") << file << ": " << scan.source;
  else
    EXPECT_EQ(scan.source, expected == Source::index ? "index" : "packets") << file;
  expect_matches_ffprobe(file, scan);
  return scan;
}

TEST(KeyframeScan, RandomGopsMatchFfprobeInEveryContainer) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  for (int round = 0; round < 2; ++round) {
    ClipSpec spec;
    spec.seconds = 2 + double(rng() % 40) / 10;
    spec.gop = 3 + int(rng() % 40);
    spec.bframes = int(rng() % 4);
    spec.open_gop = rng() % 2;
    spec.audio = rng() % 2;
    SCOPED_TRACE(fmt::format("{} s, GOP {}, {} B-frames, open GOP {}, audio {}", spec.seconds, spec.gop, spec.bframes,
                             spec.open_gop, spec.audio));
    const std::string mp4 = make_clip(dir, fmt::format("random{}.mp4", round), spec);
    const KeyframeScan scan = scan_and_check(mp4, Source::index);
    EXPECT_EQ(int64_t(scan.keyframes.size()), (scan.frame_count + spec.gop - 1) / spec.gop) << "one every GOP";
    for (const std::string ext : {"mov", "mkv"})
      scan_and_check(remux(dir, mp4, fmt::format("random{}.{}", round, ext)), Source::index);
    scan_and_check(remux(dir, mp4, fmt::format("random{}.nut", round)), Source::either);
    scan_and_check(remux(dir, mp4, fmt::format("random{}.ts", round)), Source::packets);
  }
}

// Open GOPs and B-frames: a keyframe is shown later than it is decoded, by
// an amount that varies, so no index decode time or fixed shift gives its pts.
TEST(KeyframeScan, OpenGopWithBFramesGivesPresentationTimes) {
  TempDir dir;
  ClipSpec spec;
  spec.seconds = 6;
  spec.gop = 20;
  spec.bframes = 3;
  spec.open_gop = true;
  const std::string mp4 = make_clip(dir, "open.mp4", spec);
  const CommandResult probe = run_command(
      "ffprobe -v error -select_streams v:0 -show_entries packet=pts,dts,flags -of csv=p=0 " + shell_quote(mp4));
  std::set<int64_t> key_delays;
  for (const std::string& line : nonempty_lines(probe.output)) {
    int64_t pts = 0, dts = 0;
    char flags[8] = {};
    if (std::sscanf(line.c_str(), "%" SCNd64 ",%" SCNd64 ",%7s", &pts, &dts, flags) == 3 && flags[0] == 'K')
      key_delays.insert(pts - dts);
  }
  EXPECT_GT(key_delays.size(), 1u) << "the clip should have keyframes shown after different delays:\n" << probe.output;
  scan_and_check(mp4, Source::index);
  scan_and_check(remux(dir, mp4, "open.mkv"), Source::index);
  scan_and_check(remux(dir, mp4, "open.ts"), Source::packets);
}

TEST(KeyframeScan, FirstTimestampAfterZero) {
  TempDir dir;
  ClipSpec spec;
  spec.bframes = 2;
  spec.audio = true;
  spec.extra = "-output_ts_offset 3";
  const std::string mp4 = make_clip(dir, "late.mp4", spec);
  const KeyframeScan scan = scan_and_check(mp4, Source::index);
  EXPECT_NEAR(double(scan.keyframes.front().pts) * av_q2d(scan.time_base), 3.0, 0.1);
  scan_and_check(remux(dir, mp4, "late.mkv", "-copyts"), Source::index);
  const KeyframeScan ts = scan_and_check(remux(dir, mp4, "late.ts", "-copyts"), Source::packets);
  EXPECT_GT(ts.start_seconds, 3.0);
}

// A stream copy cut mid-GOP: an edit list hides the frames before the cut,
// but decoding still starts at the keyframe before it.
TEST(KeyframeScan, EditListCutBetweenKeyframes) {
  TempDir dir;
  ClipSpec spec;
  spec.seconds = 6;
  spec.gop = 25;
  spec.bframes = 3;
  const std::string cut = dir.file("cut.mp4");
  const std::string whole = make_clip(dir, "in.mp4", spec);
  ASSERT_EQ(run_ffmpeg("-ss 1.3 -i " + shell_quote(whole) + " -c copy " + shell_quote(cut)).exit_code, 0);
  const KeyframeScan scan = scan_and_check(cut, Source::index);
  EXPECT_LT(scan.keyframes.front().pts, 0) << "the keyframe before the cut";
  EXPECT_EQ(scan.frame_count, decoded_video_frames(cut));
}

TEST(KeyframeScan, VariableFrameRate) {
  TempDir dir;
  ClipSpec spec;
  spec.seconds = 6;
  spec.gop = 12;
  spec.bframes = 2;
  spec.extra = "-vf \"setpts='if(lt(N,40),N*0.04,if(lt(N,80),1.6+(N-40)*0.1,5.6+(N-80)*0.02))/TB'\" -fps_mode vfr";
  const std::string mkv = make_clip(dir, "vfr.mkv", spec);
  scan_and_check(mkv, Source::index);
  scan_and_check(remux(dir, mkv, "vfr.mp4"), Source::index);
  scan_and_check(remux(dir, mkv, "vfr.nut"), Source::either);
}

// Indexes that list some keyframes or none: the packets are read instead.
TEST(KeyframeScan, MissingOrPartialIndexFallsBackToPackets) {
  TempDir dir;
  ClipSpec spec;
  spec.seconds = 8;
  spec.gop = 15;
  spec.bframes = 1;
  spec.audio = true;
  const std::string mp4 = make_clip(dir, "in.mp4", spec);
  const std::string no_cues = dir.file("no_cues.mkv");  // a Matroska file written to a pipe has no cues
  const CommandResult piped =
      run_command("ffmpeg -v error -i " + shell_quote(mp4) + " -c copy -f matroska - > " + shell_quote(no_cues));
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  scan_and_check(no_cues, Source::packets);
  // With a segment index FFmpeg reads the fragments' sample tables lazily.
  const std::string fragmented =
      remux(dir, mp4, "fragmented.mp4", "-movflags frag_keyframe+empty_moov+default_base_moof+global_sidx");
  scan_and_check(fragmented, Source::packets);
  scan_and_check(remux(dir, mp4, "in.flv"), Source::packets);  // FLV's index: what probing read
}

// A raw stream has no timestamps to cut at: it stays one segment.
TEST(KeyframeScan, RawStreamWithoutTimestampsHasNoCutPoints) {
  TempDir dir;
  ClipSpec spec;
  spec.gop = 10;
  const std::string raw = remux(dir, make_clip(dir, "in.mp4", spec), "in.h264", "-bsf:v h264_mp4toannexb");
  const KeyframeScan scan = scan_keyframes(raw);
  EXPECT_EQ(scan.source, "packets");
  EXPECT_TRUE(scan.keyframes.empty());
  EXPECT_EQ(scan.frame_count, decoded_video_frames(raw));
  EXPECT_EQ(choose_segments(scan, 4, 0, 0).size(), 1u);
}

TEST(KeyframeScan, OneKeyframe) {
  TempDir dir;
  ClipSpec spec;
  spec.seconds = 3;
  spec.gop = 1000;
  spec.bframes = 2;
  for (const std::string ext : {"mp4", "mkv", "ts"}) {
    const Source source = ext == "ts" ? Source::packets : Source::index;
    const KeyframeScan scan = scan_and_check(make_clip(dir, "one." + ext, spec), source);
    EXPECT_EQ(scan.keyframes.size(), 1u);
    EXPECT_EQ(choose_segments(scan, 4, 0, 0).size(), 1u);
    EXPECT_EQ(choose_segments(scan, 0, 60, 0).size(), 1u) << "shorter than one segment";
  }
}

TEST(KeyframeScan, ErrorsNameTheFile) {
  TempDir dir;
  const auto expect_error = [](const std::string& path, ExitCode code) {
    try {
      scan_keyframes(path);
      ADD_FAILURE() << path << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  expect_error(dir.file("missing.mp4"), ExitCode::no_input);

  const std::string noise = dir.file("noise.mp4");
  std::mt19937_64 rng(fresh_seed());
  std::ofstream out(noise, std::ios::binary);
  for (int i = 0; i < 65536; ++i) out.put(char(rng()));
  out.close();
  expect_error(noise, ExitCode::data_error);

  const std::string audio = dir.file("tone.m4a");
  ASSERT_EQ(run_ffmpeg("-f lavfi -i sine=frequency=440 -t 1 -c:a aac " + shell_quote(audio)).exit_code, 0);
  expect_error(audio, ExitCode::data_error);

  // Two transport streams joined: the second restarts the clock.
  ClipSpec spec;
  spec.seconds = 2;
  const std::string a = make_clip(dir, "a.ts", spec), b = make_clip(dir, "b.ts", spec);
  const std::string joined = dir.file("joined.ts");
  ASSERT_EQ(run_command("cat " + shell_quote(a) + " " + shell_quote(b) + " > " + shell_quote(joined)).exit_code, 0);
  expect_error(joined, ExitCode::data_error);
}

}  // namespace
}  // namespace sp::test
