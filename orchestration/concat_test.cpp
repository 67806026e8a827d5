// The concat of a segment plan against a single run of the same chain over
// the same input: clips made with the ffmpeg CLI at random sizes, rates,
// keyframe intervals and cut points, compared with ffprobe/ffmpeg.
#include "orchestration/concat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "orchestration/concat_test_util.h"

namespace sp::test {
// Fixture helpers of another test file may share names: each set has its own namespace.
using namespace concat_fixtures;
namespace {

std::vector<StageSpec> random_chain(const ClipSettings& c, std::mt19937_64& rng) {
  if (rng() % 2) return {};
  return scale_chain(2 * (c.width / 4 + int(rng() % 64)), 2 * (c.height / 4 + int(rng() % 48)));
}

void expect_same_times(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-6) << "frame " << i;
}

struct SplitRun {
  TempDir dir;
  Manifest manifest;
  std::string single;
  ConcatResult result;
};

// Cuts the clip at random keyframes, runs the segments and the single run,
// and joins the segments.
void split_run_and_join(SplitRun& run, const ClipSettings& clip, const ManifestOutput& output, std::mt19937_64& rng) {
  const std::string input = make_clip(run.dir, clip, rng);
  const VideoPackets packets = probe_video_packets(input);
  ASSERT_GE(packets.keyframe_pts.size(), 3u) << "the clip has too few keyframes";
  const std::vector<int64_t> cuts = random_cuts(packets.keyframe_pts, rng);
  const std::vector<StageSpec> stages = random_chain(clip, rng);
  SCOPED_TRACE(testing::Message() << clip.width << "x" << clip.height << " at " << clip.rate << " in "
                                  << clip.container << ", " << cuts.size() + 1 << " segments, "
                                  << (stages.empty() ? "no stage" : "scale"));
  run.manifest = make_manifest(input, cuts, output, run.dir.path().string(), "plan-" + std::to_string(rng()));
  ASSERT_NO_FATAL_FAILURE(run_all_segments(run.manifest, stages));
  run.single = run.dir.file("single." + std::filesystem::path(output.path).extension().string().substr(1));
  ASSERT_NO_FATAL_FAILURE(run_single(run.manifest, stages, run.single));
  run.result = concat_segments(run.manifest, {});
  EXPECT_EQ(run.result.segments, int(cuts.size() + 1));
}

// Times, sizes and md5 of every subtitle packet (none where the container dropped the stream).
std::string subtitle_packets(const std::string& file) {
  const CommandResult r = run_command("ffprobe -v error -select_streams s -show_data_hash MD5 -show_entries "
                                      "packet=stream_index,pts,duration,size,data_hash -of csv=p=0 " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// The decode times of every video packet, as ffprobe reads them (Matroska's
// first ones are N/A: all of them are derived). Presentation times come in
// the order each encoder chose for the frames between two keyframes.
std::vector<std::string> decode_times(const std::string& file) {
  const CommandResult r = run_command("ffprobe -v error -select_streams v:0 -show_entries packet=dts -of csv=p=0 " +
                                      shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nonempty_lines(r.output);
}

void expect_same_as_single_run(const SplitRun& run) {
  const std::string& joined = run.manifest.output.path;
  EXPECT_FALSE(std::filesystem::exists(run.dir.file("." + std::filesystem::path(joined).filename().string() + ".partial")));
  const int frames = decoded_video_frames(run.single);
  EXPECT_GT(frames, 0);
  EXPECT_EQ(decoded_video_frames(joined), frames);
  EXPECT_EQ(run.result.frames, frames);
  expect_same_times(video_frame_times(joined), video_frame_times(run.single));
  const std::vector<std::string> audio = audio_packet_hashes(run.single);
  EXPECT_GT(audio.size(), 10u);
  EXPECT_EQ(audio_packet_hashes(joined), audio) << "audio packets differ";
  EXPECT_EQ(probe_streams(joined), probe_streams(run.single));
  EXPECT_EQ(subtitle_packets(joined), subtitle_packets(run.single));
  // MP4's edit list and average rate come from the decode times: the single run's B-frames must be kept.
  EXPECT_EQ(probe_video_description(joined), probe_video_description(run.single));
  EXPECT_EQ(decode_times(joined), decode_times(run.single));
}

ManifestOutput output_to(const SplitRun& run, const std::string& name, const std::string& codec) {
  ManifestOutput o;
  o.path = run.dir.file(name);
  o.codec = codec;
  o.preset = "veryfast";
  return o;
}

TEST(ConcatE2E, LosslessSegmentsJoinIntoExactlyTheSingleRunsPictures) {
  std::mt19937_64 rng(fresh_seed() ^ 0x5e6);
  SplitRun run;
  const ClipSettings clip = random_clip(rng);
  ASSERT_NO_FATAL_FAILURE(split_run_and_join(run, clip, output_to(run, "joined.mkv", "ffv1"), rng));
  expect_same_as_single_run(run);
  EXPECT_EQ(video_md5s(run.manifest.output.path), video_md5s(run.single)) << "decoded pictures differ";
}

// Raw video's codec tag is its pixel layout: the joined file must carry the
// single run's, or it decodes as another layout (or the muxer refuses it).
TEST(ConcatE2E, RawVideoSegmentsJoinIntoExactlyTheSingleRunsPictures) {
  std::mt19937_64 rng(fresh_seed() ^ 0x4a3);
  SplitRun run;
  const ClipSettings clip = random_clip(rng);
  const char* joined = rng() % 2 ? "joined.mkv" : "joined.nut";
  ASSERT_NO_FATAL_FAILURE(split_run_and_join(run, clip, output_to(run, joined, "rawvideo"), rng));
  expect_same_as_single_run(run);
  EXPECT_EQ(video_md5s(run.manifest.output.path), video_md5s(run.single)) << "decoded pictures differ";
}

// B-frames where a single run has them (MP4, MOV, Matroska), none in NUT.
TEST(ConcatE2E, X264SegmentsJoinWithTheSingleRunsTimesAndReordering) {
  std::mt19937_64 rng(fresh_seed() ^ 0x264);
  SplitRun run;
  const ClipSettings clip = random_clip(rng);
  const char* outputs[] = {"joined.mp4", "joined.mov", "joined.mkv", "joined.nut"};
  const char* joined = outputs[rng() % std::size(outputs)];
  SCOPED_TRACE(joined);
  ASSERT_NO_FATAL_FAILURE(split_run_and_join(run, clip, output_to(run, joined, "libx264"), rng));
  expect_same_as_single_run(run);
}

TEST(ConcatE2E, VariableRateClipWithALateStartKeepsItsTimes) {
  std::mt19937_64 rng(fresh_seed() ^ 0xf4);
  SplitRun run;
  ClipSettings clip = random_clip(rng);
  clip.container = rng() % 2 ? "mkv" : "mp4";
  // Three stretches at different random frame spacings, starting late.
  const double start = 0.2 + double(rng() % 30) / 10;
  const int first_stretch = 10 + int(rng() % 20), second_stretch = first_stretch + 10 + int(rng() % 20);
  const double steps[] = {0.01 + double(rng() % 70) / 1000, 0.01 + double(rng() % 70) / 1000,
                          0.01 + double(rng() % 70) / 1000};
  char expression[512];
  std::snprintf(expression, sizeof(expression),
                "setpts='(%.3f+if(lt(N,%d),N*%.3f,if(lt(N,%d),%d*%.3f+(N-%d)*%.3f,%d*%.3f+%d*%.3f+(N-%d)*%.3f)))/TB'",
                start, first_stretch, steps[0], second_stretch, first_stretch, steps[0], first_stretch, steps[1],
                first_stretch, steps[0], second_stretch - first_stretch, steps[1], second_stretch, steps[2]);
  clip.video_filter = expression;
  clip.seconds = start + 3 + double(rng() % 20) / 10;  // at most 80 ms a frame: 37 frames or more
  clip.gop = 4 + int(rng() % 6);
  clip.extra = "-fps_mode vfr -output_ts_offset " + std::to_string(double(rng() % 2000) / 1000);
  SCOPED_TRACE(clip.video_filter);
  const char* outputs[][2] = {{"joined.mkv", "ffv1"}, {"joined.mp4", "libx264"}};
  const auto* chosen = outputs[rng() % 2];
  ASSERT_NO_FATAL_FAILURE(split_run_and_join(run, clip, output_to(run, chosen[0], chosen[1]), rng));
  const std::vector<double> times = video_frame_times(run.single);
  ASSERT_FALSE(times.empty());
  EXPECT_GT(times.front(), 0.1) << "the clip should start late";
  expect_same_as_single_run(run);
}

}  // namespace
}  // namespace sp::test
