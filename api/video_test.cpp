// VideoReader and VideoWriter against the CLI on the same clip: the reader's
// frames are `stylepipe run configs/identity.yaml`'s raw RGBA pictures, and
// reader -> chain -> writer gives `stylepipe run`'s video.
#include "stylepipe/video.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "stylepipe/errors.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

std::string make_clip(const TempDir& dir, std::mt19937_64& rng) {
  const std::string clip = dir.file("in.mkv");
  // A window of a moving pattern at a place of this run's seed.
  const CommandResult made = ffmpeg("-f lavfi -i testsrc2=size=360x270:rate=25,crop=160:120:" + std::to_string(rng() % 200) +
                                    ":" + std::to_string(rng() % 150) + " -t 1 -c:v ffv1 -pix_fmt yuv420p " + shell_quote(clip));
  EXPECT_EQ(made.exit_code, 0) << made.output;
  return clip;
}

TEST(PublicVideo, ReaderFramesAreTheClisPictures) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string clip = make_clip(dir, rng), raw = dir.file("out.rgba");
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + shell_quote(clip) +
                                    " --backend cpu --codec rawvideo -f rawvideo --pix-fmt rgba -o " + shell_quote(raw));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(raw, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  stylepipe::VideoReader reader(clip, stylepipe::Session::open(stylepipe::Device::cpu()));
  ASSERT_EQ(reader.info().width, 160);
  ASSERT_EQ(reader.info().height, 120);
  const size_t frame_bytes = 160 * 120 * 4;
  std::vector<std::shared_ptr<stylepipe::VideoFrame>> held;
  while (auto frame = reader.next()) held.push_back(frame);
  ASSERT_EQ(held.size() * frame_bytes, bytes.size());
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(held[i]->index, int64_t(i));
    EXPECT_NEAR(held[i]->time_seconds, double(i) / 25, 1e-6);
    // Every frame still holds its own picture after the later ones were decoded.
    EXPECT_TRUE(std::equal(bytes.begin() + std::ptrdiff_t(i * frame_bytes), bytes.begin() + std::ptrdiff_t((i + 1) * frame_bytes),
                           reinterpret_cast<const char*>(held[i]->image.data)))
        << "frame " << i;
  }
}

TEST(PublicVideo, ReaderChainWriterGivesTheClisVideo) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string clip = make_clip(dir, rng), config = source_dir() + "/configs/pencil.yaml";
  const std::string by_cli = dir.file("cli.mkv"), by_api = dir.file("api.mkv");
  const CommandResult r = stylepipe("run " + shell_quote(config) + " -i " + shell_quote(clip) + " -o " +
                                    shell_quote(by_cli) + " --backend cpu --codec ffv1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  stylepipe::Chain chain = stylepipe::Chain::from_file(config, session);
  stylepipe::VideoReader reader(clip, session);
  stylepipe::VideoWriterOptions options;
  options.codec = "ffv1";
  stylepipe::VideoWriter writer(by_api, reader, session, options);
  HostImage out(160, 120);
  while (auto frame = reader.next()) {
    chain.run(frame->image, {out.pixels.data(), out.width, out.height, out.pitch}, {nullptr, frame->time_seconds});
    writer.write({out.pixels.data(), out.width, out.height, out.pitch}, frame->time_seconds);
  }
  writer.close();
  EXPECT_EQ(video_md5s(by_api), video_md5s(by_cli));
  EXPECT_THROW(writer.write({out.pixels.data(), out.width, out.height, out.pitch}, 9.0), stylepipe::Error);
  EXPECT_THROW(stylepipe::VideoReader(dir.file("missing.mkv"), session), stylepipe::MediaError);
}

}  // namespace
}  // namespace sp::test
