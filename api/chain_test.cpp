// The public chain against its independent oracle, the CLI's own output on
// the same raw frames, and its errors.
#include "stylepipe/chain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "stylepipe/errors.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

stylepipe::Image image_of(HostImage& h) { return {h.pixels.data(), h.width, h.height, h.pitch}; }

// `stylepipe run` of raw RGBA frames to raw RGBA frames, on the CPU.
std::vector<HostImage> cli_output(const std::string& config_text, const std::vector<HostImage>& frames, Size out_size) {
  TempDir dir;
  const std::string config = dir.file("chain.yaml"), in = dir.file("in.rgba"), out = dir.file("out.rgba");
  std::ofstream(config) << config_text;
  {
    std::ofstream raw(in, std::ios::binary);
    for (const HostImage& f : frames) raw.write(reinterpret_cast<const char*>(f.pixels.data()), std::streamsize(f.pixels.size()));
  }
  const CommandResult r = stylepipe("run " + shell_quote(config) + " -f rawvideo --pix-fmt rgba --size " +
                                    std::to_string(frames[0].width) + "x" + std::to_string(frames[0].height) +
                                    " --rate 30 -i " + shell_quote(in) + " --backend cpu" +
                                    " --codec rawvideo -f rawvideo --pix-fmt rgba -o " + shell_quote(out));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream raw(out, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  std::vector<HostImage> images;
  const size_t frame_bytes = size_t(out_size.width) * out_size.height * 4;
  EXPECT_EQ(bytes.size(), frame_bytes * frames.size());
  for (size_t at = 0; at + frame_bytes <= bytes.size(); at += frame_bytes) {
    HostImage image(out_size.width, out_size.height);
    std::copy_n(bytes.begin() + std::ptrdiff_t(at), frame_bytes, image.pixels.begin());
    images.push_back(std::move(image));
  }
  return images;
}

struct ChainCase {
  const char* name;
  const char* config;
};

class ChainAgainstCli : public ::testing::TestWithParam<ChainCase> {};

// A temporal chain (the pencil's smoothed tone) over several frames, a scaling
// one (xbr) and a two-stage one: the library gives the CLI's bytes.
TEST_P(ChainAgainstCli, GivesTheCliOutputBitForBit) {
  std::mt19937_64 rng(fresh_seed());
  const int width = 97 + int(rng() % 40), height = 61 + int(rng() % 30);  // odd sizes on purpose
  std::vector<HostImage> frames;
  for (int i = 0; i < 4; ++i) frames.push_back(synthetic_photo(width, height, rng));

  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  stylepipe::Chain chain = stylepipe::Chain::from_yaml(GetParam().config, session);
  const stylepipe::Size out_size = chain.output_size({width, height});
  const std::vector<HostImage> expected = cli_output(GetParam().config, frames, {out_size.width, out_size.height});
  ASSERT_EQ(expected.size(), frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    HostImage got(out_size.width, out_size.height);
    std::fill(got.pixels.begin(), got.pixels.end(), uint8_t(0xA5));  // poison: every byte must be written
    chain.run(image_of(frames[i]), image_of(got));
    const ImageDiff d = compare(got, expected[i]);
    EXPECT_EQ(d.differing_bytes, 0u) << "frame " << i << ": max difference " << d.max_abs;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Chains, ChainAgainstCli,
    ::testing::Values(ChainCase{"pencil_temporal", "pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n"},
                      ChainCase{"xbr", "pipeline:\n  - xbr: {scale: 3}\n"},
                      ChainCase{"two_stages", "pipeline:\n  - scale: {factor: 0.5}\n  - pencil: {color: false}\n"}),
    [](const auto& info) { return std::string(info.param.name); });

// An output over its input, and a padded row pitch, give the same picture.
TEST(PublicChain, InPlaceAndPitchedImagesGiveTheSamePicture) {
  std::mt19937_64 rng(fresh_seed());
  const int width = 80, height = 50;
  const HostImage source = synthetic_photo(width, height, rng);
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  auto make = [&] { return stylepipe::Chain::from_stages({{"pencil", {{"color", "true"}}}}, session); };

  HostImage in = source, expected(width, height);
  make().run(image_of(in), image_of(expected));

  HostImage in_place = source;
  make().run(image_of(in_place), image_of(in_place));
  EXPECT_EQ(compare(in_place, expected).differing_bytes, 0u);

  // Rows 64 bytes longer than the pixels, and the padding left as it was.
  const size_t pitch = size_t(width) * 4 + 64;
  std::vector<uint8_t> padded_in(pitch * height, 7), padded_out(pitch * height, 9);
  for (int y = 0; y < height; ++y)
    std::copy_n(source.pixels.begin() + std::ptrdiff_t(y * source.pitch), source.pitch, padded_in.begin() + std::ptrdiff_t(y * pitch));
  make().run({padded_in.data(), width, height, pitch}, {padded_out.data(), width, height, pitch});
  for (int y = 0; y < height; ++y) {
    ASSERT_TRUE(std::equal(expected.pixels.begin() + std::ptrdiff_t(y * expected.pitch),
                           expected.pixels.begin() + std::ptrdiff_t((y + 1) * expected.pitch),
                           padded_out.begin() + std::ptrdiff_t(y * pitch)))
        << "row " << y;
    EXPECT_EQ(padded_out[y * pitch + pitch - 1], 9) << "the padding of row " << y << " was written";
  }
}

TEST(PublicChain, ConfigErrorsCarryFileLineColumnAndField) {
  test::TempDir dir;
  const std::string path = dir.file("bad.yaml");
  std::ofstream(path) << "pipeline:\n  - pencil: {color: true}\n  - xbr: {scale: 9}\n";
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  try {
    stylepipe::Chain::from_file(path, session);
    FAIL() << "a scale of 9 was accepted";
  } catch (const stylepipe::ConfigError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 18);
    EXPECT_EQ(e.field(), "xbr.scale");
    EXPECT_EQ(e.code(), stylepipe::ExitCode::config);
    EXPECT_NE(std::string(e.what()).find(path + ":3:18: error:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(stylepipe::Chain::from_file(dir.file("missing.yaml"), session), stylepipe::MediaError);
  EXPECT_THROW(stylepipe::Chain::from_stages({{"pencl", {}}}, session), stylepipe::ConfigError);
}

TEST(PublicChain, WrongSizesAndDevicesAreRefusedBeforeAnyWork) {
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  stylepipe::Chain chain = stylepipe::Chain::from_stages({{"xbr", {{"scale", "2"}}}}, session);
  EXPECT_EQ(chain.output_size({30, 20}), (stylepipe::Size{60, 40}));
  HostImage in(30, 20), small_out(30, 20);
  std::fill(small_out.pixels.begin(), small_out.pixels.end(), uint8_t(3));
  EXPECT_THROW(chain.run(image_of(in), image_of(small_out)), stylepipe::Error);
  EXPECT_TRUE(std::all_of(small_out.pixels.begin(), small_out.pixels.end(), [](uint8_t b) { return b == 3; }));
  if (!stylepipe::build_has_cuda())
    EXPECT_THROW(stylepipe::Session::open(stylepipe::Device::cuda(0)), stylepipe::DeviceError);
  EXPECT_THROW(stylepipe::Device::parse("gpu"), stylepipe::Error);
  EXPECT_EQ(stylepipe::Device::parse("cuda:3"), stylepipe::Device::cuda(3));
  EXPECT_EQ(stylepipe::Session::open(stylepipe::Device::cpu()).get(), session.get()) << "one session a device";
}

}  // namespace
}  // namespace sp::test
