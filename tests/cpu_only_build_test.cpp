// What a build says about its backends, and how a CPU-only build (configured
// without the CUDA toolkit or with -DSTYLEPIPE_CUDA=OFF) answers where CUDA is
// asked for: exit 69 with one line naming the option and the reason, before
// any output is written; --backend auto says it once and runs on the CPU.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

#define SP_REQUIRE_CPU_ONLY_BUILD() \
  if (kBuildHasCuda) GTEST_SKIP() << "this build has the CUDA backend; these check a CPU-only build"

// A short moving test pattern, never a blank picture.
std::string make_pattern_clip(const TempDir& dir, int frames) {
  const std::string clip = dir.file("in.mp4");
  const CommandResult r = run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=96x64:rate=10 -frames:v " +
                                      std::to_string(frames) + " -pix_fmt yuv420p -c:v libx264 " + clip);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return clip;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(BuildBackends, VersionNamesTheBackendsOfThisBuild) {
  const CommandResult r = run_command(shell_quote(stylepipe_binary()) + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> lines = nonempty_lines(r.output);
  ASSERT_EQ(lines.size(), 2u) << r.output;
  EXPECT_EQ(lines[0].rfind("stylepipe ", 0), 0u) << r.output;
  EXPECT_EQ(lines[1], kBuildHasCuda ? "backends: cpu, cuda" : "backends: cpu") << r.output;
}

TEST(CpuOnlyBuild, CudaOnlyOptionsExit69WithTheReasonBeforeWriting) {
  SP_REQUIRE_CPU_ONLY_BUILD();
  TempDir dir;
  const std::string in = make_pattern_clip(dir, 5), out = dir.file("o.mkv");
  for (const std::string option : {"--backend cuda", "--hwdec nvdec", "--encoder nvenc"}) {
    const CommandResult r = stylepipe("run " + identity_config() + " -i " + in + " -o " + out + " " + option);
    EXPECT_EQ(r.exit_code, 69) << option << ": " << r.output;
    const std::vector<std::string> lines = nonempty_lines(r.output);
    ASSERT_EQ(lines.size(), 1u) << option << ": " << r.output;
    EXPECT_NE(lines[0].find(option.substr(0, option.find(' ')) + " "), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(kNoCudaInBuild), std::string::npos) << lines[0];
    EXPECT_FALSE(std::filesystem::exists(out)) << option;
  }
}

TEST(CpuOnlyBuild, BenchOnCudaExits69) {
  SP_REQUIRE_CPU_ONLY_BUILD();
  const CommandResult r = run_command(shell_quote(stylepipe_binary()) + " bench --backend cuda --size 64x48 --frames 2");
  EXPECT_EQ(r.exit_code, 69) << r.output;
  EXPECT_NE(r.output.find(kNoCudaInBuild), std::string::npos) << r.output;
}

TEST(CpuOnlyBuild, AutoSaysOnceThatThereIsNoCudaAndRunsOnTheCpu) {
  SP_REQUIRE_CPU_ONLY_BUILD();
  TempDir dir;
  const int frames = 7;
  const std::string in = make_pattern_clip(dir, frames), out = dir.file("o.mkv"), plain = dir.file("plain.mkv");
  const CommandResult r =
      stylepipe("run " + source_dir() + "/configs/pencil.yaml -i " + in + " -o " + out + " --codec ffv1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(occurrences(r.output, kNoCudaInBuild), 1u) << r.output;
  EXPECT_EQ(decoded_video_frames(out), frames);
  // The stage ran: the pictures differ from a conversion-only run's.
  ASSERT_EQ(stylepipe("run " + identity_config() + " -i " + in + " -o " + plain + " --codec ffv1").exit_code, 0);
  EXPECT_NE(video_md5s(out), video_md5s(plain));
}

TEST(CpuOnlyBuild, SegmentParallelRunSaysItOnceToo) {
  SP_REQUIRE_CPU_ONLY_BUILD();
  TempDir dir;
  const std::string in = dir.file("in.mp4"), out = dir.file("o.mkv");
  // Keyframes every 10 frames: two segments to cut.
  const CommandResult clip = run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=96x64:rate=10 -frames:v 40 -g 10 "
                                         "-pix_fmt yuv420p -c:v libx264 " + in);
  ASSERT_EQ(clip.exit_code, 0) << clip.output;
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + in + " -o " + out + " --jobs 2 --segments 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(occurrences(r.output, kNoCudaInBuild), 1u) << r.output;
  EXPECT_EQ(decoded_video_frames(out), 40);
}

}  // namespace
}  // namespace sp::test
