// --hwdec: option handling everywhere; on a GPU, NVDEC-decoded runs against
// software-decoded runs of the same clip (H.264, HEVC, VP9 and AV1 decoding
// are exact, so the outputs must be identical) and the stats' proof that no
// picture crossed PCIe on the way in.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
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
  // A CPU-only build refuses NVDEC for its own reason, before the backend's.
  const std::string reason = kBuildHasCuda ? "the CPU backend is in use" : kNoCudaInBuild;
  EXPECT_NE(r.output.find("--hwdec nvdec: " + reason), std::string::npos) << r.output;
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
  // Ten frames are a short input, which a CUDA build decodes in software even with a GPU; a build
  // without CUDA says that instead. Either way the missing device is said too.
  const std::string reason = kBuildHasCuda ? "a short input" : kNoCudaInBuild;
  EXPECT_NE(s["decoder"]["reason"].get<std::string>().find(reason), std::string::npos) << s["decoder"];
  EXPECT_NE(r.output.find("using the CPU backend"), std::string::npos) << r.output;
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

// Clips made on a machine with the encoders (the GPU machine's FFmpeg has
// only libx264): scripts/devkit-env.sh points SP_CODEC_CLIPS at them.
std::string kit_clip(const std::string& name) {
  const char* clips = std::getenv("SP_CODEC_CLIPS");
  return clips ? std::string(clips) + "/" + name : std::string();
}

// An 8-bit and a 10-bit clip: made here with `encoder` where this FFmpeg has
// it, else the kit's files; none when neither.
std::vector<std::string> eight_and_ten_bit_clips(const TempDir& dir, const std::string& encoder,
                                                 const std::string& options, const std::string& extension,
                                                 const std::string& kit_8bit, const std::string& kit_10bit) {
  if (has_encoder(encoder))
    return {make_clip(dir, "c8." + extension, "640x360", encoder + options, "yuv420p"),
            make_clip(dir, "c10." + extension, "640x360", encoder + options, "yuv420p10le")};
  if (!kit_clip("").empty()) return {kit_clip(kit_8bit), kit_clip(kit_10bit)};
  return {};
}

TEST(HwDecodeCuda, HevcEightAndTenBitMatchSoftwareDecoding) {
  SP_REQUIRE_CUDA();
  TempDir dir;
  const auto clips = eight_and_ten_bit_clips(dir, "libx265", "", "mkv", "h8.mkv", "h10.mkv");
  if (clips.empty()) GTEST_SKIP() << "no HEVC encoder (libx265) to make the clips, and no SP_CODEC_CLIPS folder";
  for (const std::string& clip : clips) expect_nvdec_matches_software(clip, "hevc");
}

TEST(HwDecodeCuda, Vp9EightAndTenBitMatchSoftwareDecoding) {
  SP_REQUIRE_CUDA();
  TempDir dir;
  const auto clips = eight_and_ten_bit_clips(dir, "libvpx-vp9", " -deadline realtime -cpu-used 8", "webm",
                                             "vp9_8.webm", "vp9_10.webm");
  if (clips.empty()) GTEST_SKIP() << "no VP9 encoder (libvpx-vp9) to make the clips, and no SP_CODEC_CLIPS folder";
  for (const std::string& clip : clips) expect_nvdec_matches_software(clip, "vp9");
}

std::vector<std::string> frame_lines(const std::string& framemd5) {
  std::vector<std::string> out;
  std::istringstream in(framemd5);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

// AV1 through NVDEC (FFmpeg's hardware-only av1 decoder where the default is
// libdav1d) against the same clip decoded by dav1d and converted on the CPU:
// here when this FFmpeg decodes AV1 in software, else the reference frame
// checksums made with the clip.
TEST(HwDecodeCuda, Av1EightAndTenBitMatchAReferenceDecoder) {
  SP_REQUIRE_CUDA();
  if (kit_clip("").empty()) GTEST_SKIP() << "no SP_CODEC_CLIPS folder with the AV1 clips";
  for (const std::string name : {"av1_8", "av1_10"}) {
    TempDir dir;
    const std::string clip = kit_clip(name + ".mkv"), hw = dir.file("hw.mkv"), stats = dir.file("s.json");
    const CommandResult a = stylepipe("run " + identity_config() + " -i " + clip + " -o " + hw +
                                      " --codec ffv1 --hwdec nvdec --backend cuda --stats-json " + stats);
    // The driver's answer, asked before decoding (the H100's NVDEC has no AV1).
    const std::string refusal = "--hwdec nvdec: this GPU's NVDEC does not decode av1 4:2:0 " +
                                std::string(name == "av1_8" ? "8" : "10") + "-bit";
    if (a.exit_code == 69 && a.output.find(refusal) != std::string::npos) {
      EXPECT_FALSE(std::filesystem::exists(hw));
      GTEST_SKIP() << "this GPU's NVDEC does not decode AV1, and says so: " << a.output;
    }
    ASSERT_EQ(a.exit_code, 0) << a.output;
    EXPECT_EQ(read_json(stats)["decoder"]["name"], "av1 (nvdec)");
    std::string reference;
    const std::string sw = dir.file("sw.mkv");
    if (stylepipe("run " + identity_config() + " -i " + clip + " -o " + sw + " --codec ffv1 --hwdec none --backend cpu")
            .exit_code == 0) {
      reference = video_md5s(sw);
    } else {
      std::ifstream in(kit_clip(name + ".framemd5"));
      reference.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const auto expected = frame_lines(reference);
    ASSERT_EQ(expected.size(), 25u) << name;
    EXPECT_EQ(frame_lines(video_md5s(hw)), expected) << name;
  }
}

// --hwdec auto asks the driver first and says why it decodes in software:
// H.264 wider than NVDEC decodes on any GPU so far (4096 or 8192 pixels).
// The clip is just long enough not to be a short input (kShortInputPixels),
// which decodes in software for that reason first.
TEST(HwDecodeCuda, AutoSaysWhenTheSizeIsAboveTheLimitAndNvdecDemandedFails) {
  SP_REQUIRE_CUDA();
  TempDir dir;
  const std::string clip = dir.file("wide.mp4");
  ASSERT_EQ(run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=8208x512:rate=25 -frames:v 61 -c:v libx264 "
                        "-preset ultrafast -pix_fmt yuv420p " + clip).exit_code, 0);
  const std::string out = dir.file("o.mkv"), stats = dir.file("s.json");
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + clip + " -o " + out +
                                    " --codec ffv1 --backend cuda --stats-json " + stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("decoding in software: 8208x512 is above this GPU's NVDEC limit for h264"), std::string::npos)
      << r.output;
  const nlohmann::json s = read_json(stats);
  EXPECT_EQ(s["decoder"]["name"], "h264") << s["decoder"];
  EXPECT_EQ(s["frames"]["out"], 61);
  const CommandResult demanded = stylepipe("run " + identity_config() + " -i " + clip + " -o " + dir.file("p.mkv") +
                                           " --codec ffv1 --hwdec nvdec");
  EXPECT_EQ(demanded.exit_code, 69) << demanded.output;
  EXPECT_NE(demanded.output.find("--hwdec nvdec: 8208x512 is above"), std::string::npos) << demanded.output;
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
