// --hwdec: option handling everywhere; on a GPU, NVDEC-decoded runs against
// software-decoded runs of the same clip (H.264 and HEVC decoding are exact,
// so the outputs must be identical) and the stats' proof that no picture
// crossed PCIe on the way in.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "pipeline/device.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

// Random pictures (bytes from the test's generator), so a wrong or reordered
// frame shows; the GPU machine's FFmpeg has no noise filter.
std::string make_clip(const TempDir& dir, const std::string& name, const std::string& size, const std::string& codec,
                      const std::string& pix_fmt, double seconds = 1.0) {
  std::mt19937_64 rng(fresh_seed() ^ std::hash<std::string>{}(name));
  const int w = std::stoi(size), h = std::stoi(size.substr(size.find('x') + 1));
  const int frames = int(25 * seconds);
  const std::string raw = dir.file(name + ".yuv"), path = dir.file(name);
  {
    std::ofstream out(raw, std::ios::binary);
    std::vector<uint8_t> picture(size_t(w) * h * 3 / 2);
    for (int f = 0; f < frames; ++f) {
      for (auto& b : picture) b = uint8_t(rng());
      out.write(reinterpret_cast<const char*>(picture.data()), std::streamsize(picture.size()));
    }
  }
  const CommandResult r = run_command("ffmpeg -v error -y -f rawvideo -pix_fmt yuv420p -s " + size + " -r 25 -i " +
                                      shell_quote(raw) + " -c:v " + codec + " -pix_fmt " + pix_fmt + " " +
                                      shell_quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

bool has_encoder(const std::string& name) {
  return run_command("ffmpeg -hide_banner -encoders 2>/dev/null | grep -qw " + name).exit_code == 0;
}

TEST(HwDecode, UnknownModeIsAUsageError) {
  const CommandResult r = stylepipe("run " + identity_config() + " -i x.mp4 -o y.mkv --hwdec cuvid");
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("--hwdec"), std::string::npos) << r.output;
}

TEST(HwDecode, DemandedOnTheCpuBackendFailsBeforeWork) {
  TempDir dir;
  const std::string in = make_clip(dir, "in.mp4", "64x48", "libx264", "yuv420p", 0.2), out = dir.file("o.mkv");
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + in + " -o " + out + " --hwdec nvdec --backend cpu");
  EXPECT_EQ(r.exit_code, 69) << r.output;
  EXPECT_NE(r.output.find("--hwdec nvdec: the CPU backend is in use"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(HwDecode, AutoWithoutADeviceDecodesInSoftwareAndSaysWhy) {
  std::string why;
  if (cuda_device_available(&why)) GTEST_SKIP() << "a CUDA device is present; this checks the no-device path";
  TempDir dir;
  const std::string in = make_clip(dir, "in.mp4", "96x64", "libx264", "yuv420p", 0.4), stats = dir.file("s.json");
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + in + " -o " + dir.file("o.mkv") +
                                    " --stats-json " + stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json s = read_json(stats);
  EXPECT_EQ(s["decoder"]["name"], "h264");
  EXPECT_NE(s["decoder"]["reason"].get<std::string>().find("CPU backend"), std::string::npos) << s["decoder"];
  const CommandResult demanded = stylepipe("run " + identity_config() + " -i " + in + " -o " + dir.file("p.mkv") +
                                           " --hwdec nvdec");
  EXPECT_EQ(demanded.exit_code, 69) << demanded.output;
}

// NVDEC and the software decoder must give the same pictures, and the
// NVDEC run must not upload any.
void expect_nvdec_matches_software(const std::string& clip, const std::string& expected_codec) {
  TempDir dir;
  const std::string hw = dir.file("hw.mkv"), sw = dir.file("sw.mkv"), stats = dir.file("hw.json");
  const CommandResult a = stylepipe("run " + identity_config() + " -i " + clip + " -o " + hw +
                                    " --codec ffv1 --hwdec nvdec --backend cuda --stats-json " + stats);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const CommandResult b = stylepipe("run " + identity_config() + " -i " + clip + " -o " + sw +
                                    " --codec ffv1 --hwdec none --backend cuda");
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const nlohmann::json s = read_json(stats);
  EXPECT_EQ(s["decoder"]["name"], expected_codec + " (nvdec)") << s["decoder"];
  EXPECT_EQ(s["transfer_bytes"]["host_to_device"], 0) << "NVDEC pictures are read in place";
  EXPECT_GT(s["frames"]["out"].get<int>(), 0);
  EXPECT_EQ(video_md5s(hw), video_md5s(sw)) << clip;
}

TEST(HwDecodeCuda, H264MatchesSoftwareDecoding) {
  SP_REQUIRE_CUDA();
  TempDir dir;
  expect_nvdec_matches_software(make_clip(dir, "in.mp4", "640x360", "libx264", "yuv420p"), "h264");
}

TEST(HwDecodeCuda, HevcEightAndTenBitMatchSoftwareDecoding) {
  SP_REQUIRE_CUDA();
  TempDir dir;
  std::string h8, h10;
  if (has_encoder("libx265")) {
    h8 = make_clip(dir, "h8.mkv", "640x360", "libx265", "yuv420p");
    h10 = make_clip(dir, "h10.mkv", "640x360", "libx265", "yuv420p10le");
  } else if (const char* clips = std::getenv("SP_HEVC_CLIPS")) {
    // The GPU machine's FFmpeg has no HEVC encoder: clips made elsewhere (scripts/gpu-check.sh).
    h8 = std::string(clips) + "/h8.mkv";
    h10 = std::string(clips) + "/h10.mkv";
  } else {
    GTEST_SKIP() << "no HEVC encoder (libx265) to make the clips, and no SP_HEVC_CLIPS folder";
  }
  expect_nvdec_matches_software(h8, "hevc");
  expect_nvdec_matches_software(h10, "hevc");
}

TEST(HwDecodeCuda, ResolutionChangeKeepsGoing) {
  SP_REQUIRE_CUDA();
  TempDir dir;
  const std::string a = dir.file("a.ts"), b = dir.file("b.ts"), joined = dir.file("joined.ts");
  ASSERT_EQ(run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -t 1 -c:v libx264 -pix_fmt yuv420p " + a).exit_code, 0);
  ASSERT_EQ(run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=256x144:rate=25 -t 1 -c:v libx264 -pix_fmt yuv420p "
                        "-output_ts_offset 1 " + b).exit_code, 0);
  ASSERT_EQ(run_command("cat " + a + " " + b + " > " + joined).exit_code, 0);
  expect_nvdec_matches_software(joined, "h264");
}

// --encoder: without NVENC (no device here, or a datacenter GPU) auto falls
// back to the software encoder and says why; nvenc fails with exit 69.
TEST(HwEncode, AutoFallsBackWithAReasonAndNvencDemandedFails) {
  TempDir dir;
  const std::string in = make_clip(dir, "in.mp4", "320x240", "libx264", "yuv420p", 0.4), stats = dir.file("s.json");
  const std::string out = dir.file("o.mp4");
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + in + " -o " + out +
                                    " --codec libx264 --encoder auto --stats-json " + stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(decoded_video_frames(out), 10);
  const nlohmann::json s = read_json(stats);
  const std::string name = s["encoder"]["name"];
  if (name.rfind("h264_nvenc", 0) == 0) GTEST_SKIP() << "this GPU has NVENC: the fallback cannot be seen here";
  EXPECT_EQ(name.rfind("libx264", 0), 0u) << name;
  EXPECT_FALSE(s["encoder"].value("reason", "").empty()) << s["encoder"];
  const CommandResult demanded = stylepipe("run " + identity_config() + " -i " + in + " -o " + dir.file("p.mp4") +
                                           " --codec libx264 --encoder nvenc");
  EXPECT_EQ(demanded.exit_code, 69) << demanded.output;
  EXPECT_NE(demanded.output.find("--encoder nvenc: "), std::string::npos) << demanded.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.mp4")));
}

}  // namespace
}  // namespace sp::test
