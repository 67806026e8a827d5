// Segment-parallel runs end to end on the CPU backend: plan, workers, concat,
// checked against a single run and the input, with ffprobe/ffmpeg as the oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <csignal>

#include <nlohmann/json.hpp>

#include "pipeline/stage.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

CommandResult ffmpeg(const std::string& args) { return run_command("ffmpeg -hide_banner -v error -y " + args); }

std::string example_config() { return source_dir() + "/configs/example.yaml"; }
std::string pencil_config() { return source_dir() + "/configs/pencil.yaml"; }

struct Clip {
  std::string path;
  int gop = 0;
  double seconds = 0;
};

// testsrc2 at a random start with a random tone, keyframes every `gop` frames.
Clip make_clip(const TempDir& dir, const std::string& name, std::mt19937_64& rng, const std::string& extra = "") {
  Clip c;
  c.gop = 8 + int(rng() % 20);
  c.seconds = 5 + int(rng() % 4);
  c.path = dir.file(name);
  const CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=192x144:rate=25 -f lavfi -i sine=frequency=" +
                                 std::to_string(200 + rng() % 800) + " -t " + std::to_string(c.seconds) +
                                 " -ss " + std::to_string(rng() % 50) + " -c:v libx264 -g " + std::to_string(c.gop) +
                                 " -pix_fmt yuv420p -c:a aac " + extra + " " + shell_quote(c.path));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return c;
}

void expect_same_times(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4) << what << ": frame " << i;
}

// Matroska moves every stream later when a copied AAC priming packet starts
// before zero (a single run does the same), so against the input only the
// frame times relative to the first frame are the same.
void expect_same_spacing(std::vector<double> a, std::vector<double> b, const std::string& what) {
  ASSERT_FALSE(a.empty() || b.empty()) << what;
  const double a0 = a.front(), b0 = b.front();
  for (double& t : a) t -= a0;
  for (double& t : b) t -= b0;
  expect_same_times(a, b, what);
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

// `stylepipe plan` of the example chain into `work`; returns its manifest's path.
std::string plan(const Clip& clip, const std::string& out, const std::string& work, int segments,
                 const std::string& flags = "") {
  const CommandResult r = stylepipe("plan " + example_config() + " -i " + clip.path + " -o " + out +
                                    " --backend cpu --segments " + std::to_string(segments) + " --workdir " + work +
                                    " " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("segments: " + std::to_string(segments)), std::string::npos) << r.output;
  return work + "/manifest.json";
}

std::string run_parallel_cmd(const std::string& config, const std::string& in, const std::string& out,
                             const std::string& flags) {
  return "run " + config + " -i " + shell_quote(in) + " -o " + shell_quote(out) + " --backend cpu " + flags;
}

TEST(SegmentsE2E, JobsRunEqualsSingleRunFrameForFrame) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  // Demuxers seek differently (MPEG-TS lands after the keyframe asked for): each container in turn.
  const std::vector<std::string> containers = {"mkv", "mp4", "ts", "nut"};
  const std::string container = containers[rng() % containers.size()];
  SCOPED_TRACE("input container " + container);
  const Clip clip = make_clip(dir, "in." + container, rng);
  const std::string single = dir.file("single.mkv"), split = dir.file("split.mkv"), stats = dir.file("stats.json");
  CommandResult r = stylepipe(run_parallel_cmd(example_config(), clip.path, single, "--codec ffv1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int segments = 2 + int(rng() % 4);
  r = stylepipe(run_parallel_cmd(example_config(), clip.path, split,
                                 "--codec ffv1 --jobs 2 --segments " + std::to_string(segments) + " --stats-json " + stats));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  const auto in_times = video_frame_times(clip.path);
  ASSERT_EQ(in_times.size(), size_t(std::lround(clip.seconds * 25)));
  expect_same_spacing(video_frame_times(split), in_times, "split vs input");
  expect_same_times(video_frame_times(split), video_frame_times(single), "split vs single run");
  EXPECT_EQ(audio_packet_hashes(split), audio_packet_hashes(single)) << "audio packets differ from the single run";
  EXPECT_EQ(audio_packet_hashes(split).size(), audio_packet_hashes(clip.path).size());
  EXPECT_EQ(video_md5s(split), video_md5s(single)) << "decoded pictures differ from the single run";
  const nlohmann::json s = read_json(stats);
  EXPECT_EQ(s["frames"]["out"], int(in_times.size()));
  EXPECT_EQ(s["segments"].size(), size_t(segments)) << "a GOP of " << clip.gop << " frames allows " << segments;
  EXPECT_EQ(s["workers"], "threads");
  EXPECT_FALSE(std::filesystem::exists(split + ".parts")) << "the work directory stays only with --keep-segments";
}

// Irregular frame times, an input that starts at 2.5 s, B-frames in and out.
TEST(SegmentsE2E, VariableFrameRateClipWithAudioKeepsEveryTimestamp) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = dir.file("vfr.mp4");
  const int step = 2 + int(rng() % 5);
  CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=160x120:rate=25:duration=6 -f lavfi -i sine=duration=6 "
                           "-vf \"setpts='(N*0.04+0.03*mod(N," + std::to_string(step) + "))/TB'\" -fps_mode vfr "
                           "-c:v libx264 -bf 3 -g 12 -pix_fmt yuv420p -c:a aac -output_ts_offset 2.5 " + in);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string single = dir.file("single.mp4"), split = dir.file("split.mp4");
  r = stylepipe(run_parallel_cmd(example_config(), in, single, "--preset fast"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Worker processes here; the test above has worker threads.
  r = stylepipe(run_parallel_cmd(example_config(), in, split, "--preset fast --jobs 3 --segments 4 --worker-processes"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto in_times = video_frame_times(in);
  ASSERT_GT(in_times.size(), 60u);
  ASSERT_GT(in_times.front(), 2.4) << "the input should start late";
  expect_same_times(video_frame_times(single), in_times, "single vs input");
  expect_same_times(video_frame_times(split), in_times, "split vs input");
  EXPECT_EQ(decoded_video_frames(split), int(in_times.size()));
  EXPECT_EQ(audio_packet_hashes(split), audio_packet_hashes(in));
}

TEST(SegmentsE2E, KilledWorkerIsNamedByConcatAndRerunningItCompletes) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  // Raw video of 384x288 yuv420p: 165,888 bytes a frame, so segment 1 (at
  // least one GOP, 8 frames or more) is larger than the kill limit below.
  // Matroska takes no raw video without a codec tag: the joined file is NUT.
  const Clip clip = make_clip(dir, "in.mp4", rng, "-s 384x288");
  const std::string out = dir.file("out.nut"), work = dir.file("work");
  const std::string manifest = plan(clip, out, work, 3, "--codec rawvideo");
  CommandResult r;
  for (int i : {0, 2}) {
    r = stylepipe("run --manifest " + manifest + " --index " + std::to_string(i));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  // Segment 1 dies mid-write, as abruptly as under SIGKILL: the file size
  // limit's SIGXFSZ ends it when its output reaches the limit, with no chance
  // to clean up. The limit holds for every file the process writes from its
  // start, so it stays well above what a sanitizer runtime writes before main:
  // ThreadSanitizer fills a 512 KiB file in TMPDIR and maps it as shadow
  // memory; cut short (the 4 KiB of `ulimit -f 8` in sh), the mapping ends
  // early and the worker dies of SIGBUS before it opens its output.
  constexpr uintmax_t limit = 1 << 20;
  const std::string temporary = work + "/.segment_0001.nut.partial.partial";
  r = run_command("prlimit --fsize=" + std::to_string(limit) + " " + shell_quote(stylepipe_binary()) +
                  " run --manifest " + manifest + " --index 1 --progress none");
  EXPECT_EQ(r.exit_code, 128 + SIGXFSZ) << r.output;
  ASSERT_TRUE(std::filesystem::exists(temporary)) << "the writer's temporary file\n" << r.output;
  EXPECT_EQ(std::filesystem::file_size(temporary), limit) << "the worker must die when its output reaches the limit";
  EXPECT_FALSE(std::filesystem::exists(work + "/segment_0001.nut")) << "a killed worker must leave nothing finished";
  EXPECT_FALSE(std::filesystem::exists(work + "/segment_0001.nut.partial")) << "nor anything that plays as a segment";

  r = run_command(shell_quote(stylepipe_binary()) + " concat " + manifest);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("segment 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unfinished"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out)) << "a refused concat writes nothing";

  // The array job's index comes from the environment, as on Slurm.
  r = run_command("SLURM_ARRAY_TASK_ID=1 " + shell_quote(stylepipe_binary()) + " run --manifest " + manifest +
                  " --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(std::filesystem::file_size(work + "/segment_0001.nut"), limit) << "the limit cut segment 1 short";
  r = stylepipe("run --manifest " + manifest + " --index 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("already done"), std::string::npos) << r.output;
  r = run_command(shell_quote(stylepipe_binary()) + " concat " + manifest);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_same_spacing(video_frame_times(out), video_frame_times(clip.path), "joined vs input");
}

// A worker that fails stops the others; nothing is joined; the same command
// again redoes what is not finished and completes the output.
TEST(SegmentsE2E, FailedWorkerStopsTheRunAndTheSameCommandCompletesIt) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const Clip clip = make_clip(dir, "in.mkv", rng);
  const std::string out = dir.file("out.mkv"), work = dir.file("work");
  const std::string command =
      run_parallel_cmd(example_config(), clip.path, out, "--jobs 2 --segments 3 --workdir " + work);
  // Segment 1's worker cannot open its output: a directory holds the name of its temporary file.
  const std::string blocker = work + "/.segment_0001.nut.partial.partial";
  std::filesystem::create_directories(blocker);
  std::ofstream(blocker + "/keep") << "x";
  CommandResult r = stylepipe(command);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 130) << r.output;
  EXPECT_NE(r.output.find("segment 1 failed"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out)) << "a failed run joins nothing";
  EXPECT_FALSE(std::filesystem::exists(dir.file(".out.mkv.partial"))) << "nor leaves a temporary output";

  std::filesystem::remove_all(blocker);
  r = stylepipe(command);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_same_spacing(video_frame_times(out), video_frame_times(clip.path), "joined vs input");
  EXPECT_EQ(audio_packet_hashes(out).size(), audio_packet_hashes(clip.path).size());
}

TEST(SegmentsE2E, ChangedInputIsRefused) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const Clip clip = make_clip(dir, "in.mkv", rng);
  const std::string out = dir.file("out.mkv"), work = dir.file("work");
  const std::string manifest = plan(clip, out, work, 2);
  make_clip(dir, "in.mkv", rng);  // another clip in its place
  const CommandResult r = stylepipe("run --manifest " + manifest + " --index 0");
  EXPECT_EQ(r.exit_code, 65) << r.output;
  EXPECT_NE(r.output.find("changed since the plan"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(clip.path), std::string::npos) << r.output;
}

using GrayFrames = std::vector<std::vector<uint8_t>>;

GrayFrames gray_frames(const TempDir& dir, const std::string& video, int width, int height) {
  const std::string raw = dir.file("frames.gray");
  const CommandResult r = ffmpeg("-i " + shell_quote(video) + " -f rawvideo -pix_fmt gray " + shell_quote(raw));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(raw, std::ios::binary);
  GrayFrames frames;
  for (std::vector<uint8_t> f(size_t(width) * height); in.read(reinterpret_cast<char*>(f.data()), std::streamsize(f.size()));)
    frames.push_back(f);
  return frames;
}

// Mean absolute difference of two pictures, in gray levels.
double mean_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::abs(int(a[i]) - int(b[i]));
  return sum / double(a.size());
}

// Pencil's smoothed tone histogram carries over frames: each segment warms it
// up on the frames before its start, so its frames are the single run's, and a
// seam changes no more than the same frame step does in the single run.
TEST(SegmentsE2E, TemporalSeamIsNoLargerThanChangesWithinSegments) {
  if (!StageRegistry::instance().find("pencil"))
    GTEST_SKIP() << "this build leaves the pencil stage out (STYLEPIPE_EXCLUDE_STAGES, as the TSan build does)";
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = dir.file("in.mkv");
  // Slow motion with a brightness drift, so the histogram keeps moving.
  CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=128x96:rate=25:duration=8 -vf \"eq=brightness='0.2*sin(t*" +
                           std::to_string(0.5 + (rng() % 100) / 100.0) + ")':eval=frame\" -c:v libx264 -g 20 "
                           "-pix_fmt yuv420p " + in);
  if (r.exit_code != 0 && r.output.find("No such filter: 'eq'") != std::string::npos)
    GTEST_SKIP() << "this FFmpeg has no eq filter to make the drifting clip (the GPU machine's static kit)";
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string out = dir.file("out.mkv"), single = dir.file("single.mkv"), work = dir.file("work");
  r = stylepipe(run_parallel_cmd(pencil_config(), in, single, "--codec ffv1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = stylepipe(run_parallel_cmd(pencil_config(), in, out, "--codec ffv1 --jobs 2 --segments 4 --keep-segments --workdir " + work));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json manifest = read_json(work + "/manifest.json");
  ASSERT_GT(manifest["warmup_frames"].get<int>(), 10) << "temporal_smoothing 0.8 needs a warm-up";
  const GrayFrames split_frames = gray_frames(dir, out, 128, 96), single_frames = gray_frames(dir, single, 128, 96);
  ASSERT_EQ(split_frames.size(), 200u);
  ASSERT_EQ(single_frames.size(), 200u);
  const auto times = video_frame_times(out);
  const double tb = manifest["input"]["time_base"][0].get<double>() / manifest["input"]["time_base"][1].get<double>();
  double worst_seam_excess = -1e9, largest_deviation = 0, seam_sum = 0, within_sum = 0;
  int seams = 0;
  for (size_t i = 1; i < split_frames.size(); ++i) {
    largest_deviation = std::max(largest_deviation, mean_difference(split_frames[i], single_frames[i]));
    bool at_seam = false;
    for (const auto& s : manifest["segments"])
      if (!s["begin_pts"].is_null() && std::abs(times[i] - s["begin_pts"].get<double>() * tb) < 1e-4) at_seam = true;
    const double change = mean_difference(split_frames[i], split_frames[i - 1]);
    if (!at_seam) {
      within_sum += change;
      continue;
    }
    ++seams;
    seam_sum += change;
    worst_seam_excess = std::max(worst_seam_excess, change - mean_difference(single_frames[i], single_frames[i - 1]));
  }
  ASSERT_EQ(seams, int(manifest["segments"].size()) - 1);
  std::printf("seams: mean change %.3f gray levels (the single run's steps there differ by at most %+.3f); "
              "within segments: mean %.3f; largest deviation from the single run %.3f\n",
              seam_sum / seams, worst_seam_excess, within_sum / (split_frames.size() - 1 - seams), largest_deviation);
  EXPECT_LT(worst_seam_excess, 0.25) << "a seam changes more than the single run's step at the same frame";
  EXPECT_LT(largest_deviation, 0.25) << "warmed-up segments should give the single run's frames";
}

// lowpoly's temporal mode keeps a tile's vertices until its edges change,
// and re-samples each tile once per refresh_seconds: a segment's warm-up of
// one period rebuilds the single run's vertices, so the joined video is the
// single run's, picture for picture (seams included).
TEST(SegmentsE2E, LowpolyTemporalSegmentsEqualTheSingleRun) {
  if (!StageRegistry::instance().find("lowpoly"))
    GTEST_SKIP() << "this build leaves the lowpoly stage out (STYLEPIPE_EXCLUDE_STAGES, as the TSan build does)";
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = dir.file("in.mkv"), config = dir.file("lowpoly.yaml");
  CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=128x96:rate=25:duration=6 -c:v libx264 -g 25 -pix_fmt yuv420p " + in);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double refresh = 0.3 + 0.1 * double(rng() % 4);
  std::ofstream(config) << "pipeline:\n  - lowpoly: {temporal: true, refresh_seconds: " << refresh << "}\n";
  const std::string single = dir.file("single.mkv"), split = dir.file("split.mkv"), work = dir.file("work");
  r = stylepipe(run_parallel_cmd(config, in, single, "--codec ffv1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int segments = 3 + int(rng() % 3);
  r = stylepipe(run_parallel_cmd(config, in, split, "--codec ffv1 --jobs 2 --keep-segments --workdir " + work +
                                                        " --segments " + std::to_string(segments)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("seam"), std::string::npos) << "no state is lost at the seams: " << r.output;
  const nlohmann::json manifest = read_json(work + "/manifest.json");
  EXPECT_GE(manifest["warmup_frames"].get<int>(), int(std::ceil(refresh * 25))) << "a refresh period of warm-up";
  ASSERT_GE(manifest["segments"].size(), 3u);
  EXPECT_EQ(decoded_video_frames(split), 150);
  EXPECT_EQ(video_md5s(split), video_md5s(single)) << "refresh " << refresh << " s, " << manifest["segments"].size() << " segments";
}

TEST(SegmentsE2E, InterruptedJobsRunLeavesPlayableOutput) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = dir.file("long.mkv");
  CommandResult r = ffmpeg("-f lavfi -i testsrc2=size=320x240:rate=25:duration=40 -c:v libx264 -preset ultrafast -g 25 " + in);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string out = dir.file("out.mp4");
  // A second after frames flow, so that some segments are finished and some not.
  r = stylepipe_interrupted_once_frames_flow(
      run_parallel_cmd(example_config(), in, out, "--preset veryslow --jobs 2 --segments 8 --progress json"),
      dir.file("progress.ndjson"), 1.0);
  EXPECT_EQ(r.exit_code, 130) << r.output;
  const int frames = decoded_video_frames(out);
  EXPECT_GT(frames, 0) << "an interrupted run must leave what was finished, playable";
  EXPECT_LT(frames, 1000);
}

TEST(SegmentsE2E, UsageErrorsAreOneLineAndExit64) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  const Clip clip = make_clip(dir, "in.mkv", rng);
  const std::string out = dir.file("out.mkv");
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"run " + example_config() + " -i " + clip.path + " -o " + out + " --jobs 2 --devices 7", "--devices"},
      {"run " + example_config() + " -i " + clip.path + " -o " + out + " --jobs 2 --devices x", "not a device number"},
      {"run " + example_config() + " -i - -o " + out + " --jobs 2", "-i -"},
      {"run " + example_config() + " -i " + clip.path + " -o " + out + " --jobs 2 --frames 10", "--frames"},
      {"run --manifest m.json " + example_config(), "drop CONFIG"},
      {"run " + example_config() + " -i " + clip.path + " -o " + out + " --index 1", "--manifest"},
      {"run " + example_config() + " -i " + clip.path + " -o " + out + " --segments 3", "--jobs"},
      {"plan " + example_config() + " -i " + clip.path + " -o " + out, "--segments"},
      {"plan " + example_config() + " -i " + clip.path + " -o - -f nut --segments 2", "not a pipe"},
      {"plan " + example_config() + " -i " + clip.path + " -o " + clip.path + " -y --segments 2", "the output is the input"},
  };
  for (const Case& c : cases) {
    const CommandResult r = stylepipe(c.args);
    EXPECT_EQ(r.exit_code, 64) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(nonempty_lines(r.output).size(), 1u) << c.args << "\n" << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace sp::test
