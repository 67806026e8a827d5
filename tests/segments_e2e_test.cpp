// Segment-parallel runs end to end on the CPU backend: plan, workers, concat,
// checked against a single run and the input, with ffprobe/ffmpeg as the oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include <csignal>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

std::string example_config() { return source_dir() + "/configs/example.yaml"; }

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

// A --jobs run that picks its own segments cuts at the time it aims for,
// between keyframes, decoding from the one before (a stateless chain: no
// warm-up, so a seek before the cut means the cut is not a keyframe). Its
// frames are still the single run's, each once, with the single run's times
// and audio; its last round's segments grow.
TEST(SegmentsE2E, JobsRunCutBetweenKeyframesEqualsSingleRun) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string container = rng() % 2 ? "mp4" : "ts";  // frames counted: an index of samples, or a packet scan
  SCOPED_TRACE("input container " + container);
  const bool open_gops = rng() % 2;  // B-frames before a keyframe that refer to the GOP before it
  SCOPED_TRACE(open_gops ? "open GOPs" : "closed GOPs");
  const Clip clip = make_clip(dir, "in." + container, rng,
                              std::string("-g 50") + (open_gops ? " -bf 3 -x264-params open-gop=1" : ""));  // every 2 s
  const std::string single = dir.file("single.mkv"), split = dir.file("split.mkv"), work = dir.file("work");
  CommandResult r = stylepipe(run_parallel_cmd(example_config(), clip.path, single, "--codec ffv1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = stylepipe(run_parallel_cmd(example_config(), clip.path, split,
                                 "--codec ffv1 --jobs 2 --keep-segments --workdir " + work));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json manifest = read_json(work + "/manifest.json");
  ASSERT_EQ(manifest["segments"].size(), 2u) << clip.seconds << " s for 2 workers";
  const nlohmann::json& second = manifest["segments"][1];
  EXPECT_LT(second["seek_pts"].get<int64_t>(), second["begin_pts"].get<int64_t>())
      << "the cut at " << second["begin_seconds"] << " s is a keyframe";
  EXPECT_LT(second["begin_seconds"].get<double>(), clip.seconds / 2) << "the first of the last round is the shorter";

  const auto in_times = video_frame_times(clip.path);
  ASSERT_EQ(in_times.size(), size_t(std::lround(clip.seconds * 25)));
  expect_same_times(video_frame_times(split), video_frame_times(single), "split vs single run");
  EXPECT_EQ(audio_packet_hashes(split), audio_packet_hashes(single)) << "audio packets differ from the single run";
  EXPECT_EQ(video_md5s(split), video_md5s(single)) << "decoded pictures differ from the single run";
}

// --jobs auto says in one line what it chose and why; on a host where one
// worker is enough (this clip is seconds long) that is a single run's output.
TEST(SegmentsE2E, JobsAutoSaysWhatItChoseAndGivesTheSingleRunsOutput) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const Clip clip = make_clip(dir, "in.mp4", rng);
  const std::string single = dir.file("single.mkv"), automatic = dir.file("auto.mkv");
  CommandResult r = stylepipe(run_parallel_cmd(example_config(), clip.path, single, "--codec ffv1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string stats = dir.file("stats.json");
  r = stylepipe(run_parallel_cmd(example_config(), clip.path, automatic, "--codec ffv1 --jobs auto --stats-json " + stats));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--jobs auto: 1 worker: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" s a worker"), std::string::npos) << "the input's length is in the reason: " << r.output;
  // The stats keep the choice as the log said it.
  const auto said = [&r](const nlohmann::json& choice) {
    return r.output.find("--jobs auto: " + choice["reason"].get<std::string>() + "\n") != std::string::npos;
  };
  nlohmann::json choice = read_json(stats)["jobs_auto"];
  EXPECT_EQ(choice["workers"], 1) << choice;
  EXPECT_TRUE(said(choice)) << choice << "\n" << r.output;
  EXPECT_FALSE(choice.contains("devices_reason")) << choice;
  EXPECT_EQ(video_md5s(automatic), video_md5s(single));
  EXPECT_EQ(audio_packet_hashes(automatic), audio_packet_hashes(single));
  // Segment flags keep their segments when one worker is chosen.
  r = stylepipe(run_parallel_cmd(example_config(), clip.path, automatic,
                                 "--codec ffv1 -y --jobs auto --segments 2 --stats-json " + stats));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_json(stats)["segments"].size(), 2u) << r.output;
  choice = read_json(stats)["jobs_auto"];
  EXPECT_EQ(choice["workers"], 1) << choice;
  EXPECT_TRUE(said(choice)) << choice << "\n" << r.output;
  // A run without --jobs auto has no such entry.
  r = stylepipe(run_parallel_cmd(example_config(), clip.path, automatic, "--codec ffv1 -y --jobs 2 --stats-json " + stats));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(read_json(stats).contains("jobs_auto"));
  EXPECT_EQ(video_md5s(automatic), video_md5s(single));
  r = stylepipe(run_parallel_cmd(example_config(), clip.path, automatic, "--codec ffv1 -y --jobs many"));
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("'many' is not 1..256 or auto"), std::string::npos) << r.output;
  // GPUs named for a CPU run are refused whether one worker or several come of it.
  r = stylepipe(run_parallel_cmd(example_config(), clip.path, automatic, "--codec ffv1 -y --jobs auto --devices 0"));
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("--devices needs the CUDA backend"), std::string::npos) << r.output;
}

// Under taskset or a Slurm job's cpuset the process counts the CPUs it may run
// on, not the machine's: one CPU allowed, --jobs auto says one core.
TEST(SegmentsE2E, JobsAutoCountsOnlyTheCpusTheProcessMayRunOn) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const Clip clip = make_clip(dir, "in.mp4", rng);
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const int cpu = cpus[rng() % cpus.size()];
  CommandResult r;
  std::thread([&] {  // a thread of its own: its mask, which the command inherits, is its own
    if (run_this_thread_on({cpu}))
      r = stylepipe(run_parallel_cmd(example_config(), clip.path, dir.file("out.mkv"), "--codec ffv1 --jobs auto"));
  }).join();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--jobs auto: 1 worker: the CPU backend, 1 core / 16, "), std::string::npos) << r.output;
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

// A manifest that is missing, or a directory, is one line that says which and why.
TEST(SegmentsE2E, AManifestThatCannotBeReadSaysWhy) {
  TempDir dir;
  const std::string missing = dir.file("missing.json");
  CommandResult r = stylepipe("run --manifest " + missing + " --index 0");
  EXPECT_EQ(r.exit_code, 66) << r.output;
  EXPECT_NE(r.output.find(missing + ": cannot open the manifest (No such file or directory)"), std::string::npos)
      << r.output;
  const std::string directory = dir.path().string();
  r = stylepipe("run --manifest " + directory + " --index 0");
  EXPECT_EQ(r.exit_code, 66) << r.output;
  EXPECT_NE(r.output.find(directory + ": cannot open the manifest (Is a directory)"), std::string::npos) << r.output;
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
