// The public chain against its independent oracle, the CLI's own output on
// the same raw frames, and its errors.
#include "stylepipe/chain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <thread>

#include "pipeline/convert.h"
#include "stylepipe/errors.h"
#include "stylepipe/session.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

stylepipe::Image image_of(HostImage& h) { return {h.pixels.data(), h.width, h.height, h.pitch}; }

// `stylepipe run` of raw frames (`pix_fmt`, `size`; the bytes of every frame
// one after the other) to raw RGBA frames, on the CPU.
std::vector<HostImage> cli_output_of_raw(const std::string& config_text, const std::vector<uint8_t>& raw_frames,
                                         size_t frame_count, const std::string& pix_fmt, Size size,
                                         Size out_size) {
  TempDir dir;
  const std::string config = dir.file("chain.yaml"), in = dir.file("in.raw"), out = dir.file("out.rgba");
  std::ofstream(config) << config_text;
  std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(raw_frames.data()), std::streamsize(raw_frames.size()));
  const CommandResult r = stylepipe("run " + shell_quote(config) + " -f rawvideo --pix-fmt " + pix_fmt + " --size " +
                                    std::to_string(size.width) + "x" + std::to_string(size.height) +
                                    " --rate 30 -i " + shell_quote(in) + " --backend cpu" +
                                    " --codec rawvideo -f rawvideo --pix-fmt rgba -o " + shell_quote(out));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream raw(out, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  std::vector<HostImage> images;
  const size_t frame_bytes = size_t(out_size.width) * out_size.height * 4;
  EXPECT_EQ(bytes.size(), frame_bytes * frame_count);
  for (size_t at = 0; at + frame_bytes <= bytes.size(); at += frame_bytes) {
    HostImage image(out_size.width, out_size.height);
    std::copy_n(bytes.begin() + std::ptrdiff_t(at), frame_bytes, image.pixels.begin());
    images.push_back(std::move(image));
  }
  return images;
}

std::vector<HostImage> cli_output(const std::string& config_text, const std::vector<HostImage>& frames, Size out_size) {
  std::vector<uint8_t> raw;
  for (const HostImage& f : frames) raw.insert(raw.end(), f.pixels.begin(), f.pixels.end());
  return cli_output_of_raw(config_text, raw, frames.size(), "rgba", {frames[0].width, frames[0].height}, out_size);
}

// A YUV 4:2:0 picture in host memory, every plane's rows padded by `padding`
// bytes (the padding holds other bytes, which must not be read as pixels).
struct HostYuv {
  PixelFormat format;
  int width, height;
  std::vector<uint8_t> planes[3];
  size_t pitches[3] = {0, 0, 0};

  HostYuv(const HostImage& rgba, PixelFormat f, const ColorSpec& color, size_t padding, std::mt19937_64& rng)
      : format(f), width(rgba.width), height(rgba.height) {
    const PlaneLayout tight = plane_layout(f, width, height);
    PlanarView view{f, width, height};
    for (int i = 0; i < tight.count; ++i) {
      pitches[i] = tight.pitch[i] + padding;
      planes[i].resize(pitches[i] * size_t(tight.rows[i]));
      for (uint8_t& b : planes[i]) b = uint8_t(rng());
      view.plane[i] = planes[i].data();
      view.pitch[i] = pitches[i];
    }
    convert_from_rgba_cpu(rgba.view(), color, view);
  }
  // The planes without padding, as a raw file holds them.
  std::vector<uint8_t> tight_bytes() const {
    const PlaneLayout tight = plane_layout(format, width, height);
    std::vector<uint8_t> bytes;
    for (int i = 0; i < tight.count; ++i)
      for (int y = 0; y < tight.rows[i]; ++y)
        bytes.insert(bytes.end(), planes[i].begin() + std::ptrdiff_t(y * pitches[i]),
                     planes[i].begin() + std::ptrdiff_t(y * pitches[i] + tight.pitch[i]));
    return bytes;
  }
  stylepipe::YuvImage image(stylepipe::YuvMatrix matrix, stylepipe::YuvRange range) const {
    stylepipe::YuvImage y;
    y.format = format == PixelFormat::nv12 ? stylepipe::YuvFormat::nv12 : stylepipe::YuvFormat::i420;
    y.matrix = matrix;
    y.range = range;
    y.width = width;
    y.height = height;
    for (int i = 0; i < 3; ++i) {
      y.planes[i] = planes[i].empty() ? nullptr : planes[i].data();
      y.pitches[i] = pitches[i];
    }
    return y;
  }
};

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

// NV12 and I420 frames, rows padded, through a temporal chain: the CLI's
// bytes on the same raw frames (which it reads as BT.601 limited range, as
// every untagged standard-definition video).
TEST(PublicChain, YuvFramesGiveTheCliOutputOnTheSameRawFrames) {
  std::mt19937_64 rng(fresh_seed());
  const int width = 91 + 2 * int(rng() % 20), height = 57 + 2 * int(rng() % 15);  // odd: half chroma samples
  const std::string config = "pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n";
  const ColorSpec bt601{ColorMatrix::bt601, ColorRange::limited};
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  for (PixelFormat format : {PixelFormat::nv12, PixelFormat::yuv420p}) {
    SCOPED_TRACE(to_string(format));
    std::vector<HostYuv> frames;
    std::vector<uint8_t> raw;
    for (int i = 0; i < 3; ++i) {
      frames.emplace_back(synthetic_photo(width, height, rng), format, bt601, 1 + rng() % 64, rng);
      const std::vector<uint8_t> tight = frames.back().tight_bytes();
      raw.insert(raw.end(), tight.begin(), tight.end());
    }
    const std::vector<HostImage> expected = cli_output_of_raw(config, raw, frames.size(), format == PixelFormat::nv12 ? "nv12" : "yuv420p",
                                                              {width, height}, {width, height});
    ASSERT_EQ(expected.size(), frames.size());
    stylepipe::Chain chain = stylepipe::Chain::from_yaml(config, session);
    for (size_t i = 0; i < frames.size(); ++i) {
      HostImage got(width, height);
      std::fill(got.pixels.begin(), got.pixels.end(), uint8_t(0xA5));
      chain.run(frames[i].image(stylepipe::YuvMatrix::bt601, stylepipe::YuvRange::limited), image_of(got));
      const ImageDiff d = compare(got, expected[i]);
      EXPECT_EQ(d.differing_bytes, 0u) << "frame " << i << ": max difference " << d.max_abs;
    }
  }
}

// Each matrix and range is the conversion it names: the chain on the YUV
// frame equals the chain on that frame converted with that colour.
TEST(PublicChain, YuvMatrixAndRangeAreTheOnesNamed) {
  std::mt19937_64 rng(fresh_seed());
  const int width = 64, height = 48;
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  const HostYuv frame(synthetic_photo(width, height, rng), PixelFormat::nv12, {ColorMatrix::bt709, ColorRange::full}, 0, rng);
  const struct {
    stylepipe::YuvMatrix matrix;
    stylepipe::YuvRange range;
    ColorSpec color;
  } cases[] = {{stylepipe::YuvMatrix::bt601, stylepipe::YuvRange::limited, {ColorMatrix::bt601, ColorRange::limited}},
               {stylepipe::YuvMatrix::bt709, stylepipe::YuvRange::full, {ColorMatrix::bt709, ColorRange::full}},
               {stylepipe::YuvMatrix::bt2020, stylepipe::YuvRange::limited, {ColorMatrix::bt2020, ColorRange::limited}}};
  std::vector<HostImage> outputs;
  for (const auto& c : cases) {
    HostImage rgba(width, height), expected(width, height), got(width, height);
    const stylepipe::YuvImage yuv = frame.image(c.matrix, c.range);
    PlanarView view{PixelFormat::nv12, width, height};
    for (int i = 0; i < 2; ++i) {
      view.plane[i] = const_cast<uint8_t*>(yuv.planes[i]);
      view.pitch[i] = yuv.pitches[i];
    }
    convert_to_rgba_cpu(view, c.color, rgba.view());
    stylepipe::Chain::from_stages({{"pencil", {{"color", "true"}}}}, session).run(image_of(rgba), image_of(expected));
    stylepipe::Chain::from_stages({{"pencil", {{"color", "true"}}}}, session).run(yuv, image_of(got));
    EXPECT_EQ(compare(got, expected).differing_bytes, 0u);
    for (const HostImage& other : outputs) EXPECT_GT(compare(got, other).differing_bytes, 0u) << "two colours, one picture";
    outputs.push_back(got);
  }
}

TEST(PublicChain, YuvPlanesTooShortOrMissingAreRefused) {
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  stylepipe::Chain chain = stylepipe::Chain::from_stages({{"xbr", {{"scale", "2"}}}}, session);
  std::vector<uint8_t> y(31 * 20), uv(32 * 10);
  HostImage out(62, 40);
  stylepipe::YuvImage image;
  image.width = 31;
  image.height = 20;
  image.planes[0] = y.data();
  image.pitches[0] = 31;
  image.planes[1] = uv.data();
  image.pitches[1] = 30;  // 16 UV pairs need 32 bytes
  try {
    chain.run(image, image_of(out));
    FAIL() << "a short UV row was accepted";
  } catch (const stylepipe::Error& e) {
    EXPECT_NE(std::string(e.what()).find("UV plane"), std::string::npos) << e.what();
  }
  image.pitches[1] = 32;
  image.format = stylepipe::YuvFormat::i420;  // and no third plane
  EXPECT_THROW(chain.run(image, image_of(out)), stylepipe::Error);
  image.format = stylepipe::YuvFormat::nv12;
  EXPECT_NO_THROW(chain.run(image, image_of(out)));
}

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

// The calling thread's device, as a transcode on it takes it: the first
// until the thread chooses another; one the process does not see is refused.
TEST(PublicDevice, ANewThreadIsOnTheFirstAndADeviceNotThereIsRefused) {
  std::thread([] {
    EXPECT_EQ(stylepipe::current_cuda_device(), 0);
    EXPECT_NO_THROW(stylepipe::use_cuda_device(0));
    EXPECT_EQ(stylepipe::current_cuda_device(), 0);
    EXPECT_THROW(stylepipe::use_cuda_device(-1), stylepipe::DeviceError);
    const int absent = std::max(1, stylepipe::cuda_device_count());
    try {
      stylepipe::use_cuda_device(absent);
      ADD_FAILURE() << "cuda:" << absent << " was taken";
    } catch (const stylepipe::DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find("cuda:" + std::to_string(absent)), std::string::npos) << e.what();
    }
  }).join();
}

TEST(PublicChain, WrongSizesAndDevicesAreRefusedBeforeAnyWork) {
  auto session = stylepipe::Session::open(stylepipe::Device::cpu());
  stylepipe::Chain chain = stylepipe::Chain::from_stages({{"xbr", {{"scale", "2"}}}}, session);
  EXPECT_EQ(chain.output_size({30, 20}), (stylepipe::Size{60, 40}));
  HostImage in(30, 20), small_out(30, 20);
  std::fill(small_out.pixels.begin(), small_out.pixels.end(), uint8_t(3));
  EXPECT_THROW(chain.run(image_of(in), image_of(small_out)), stylepipe::Error);
  EXPECT_TRUE(std::all_of(small_out.pixels.begin(), small_out.pixels.end(), [](uint8_t b) { return b == 3; }));
  if (!stylepipe::build_has_cuda()) {
    EXPECT_THROW(stylepipe::Session::open(stylepipe::Device::cuda(0)), stylepipe::DeviceError);
  }
  EXPECT_THROW(stylepipe::Device::parse("gpu"), stylepipe::Error);
  EXPECT_EQ(stylepipe::Device::parse("cuda:3"), stylepipe::Device::cuda(3));
  EXPECT_EQ(stylepipe::Session::open(stylepipe::Device::cpu()).get(), session.get()) << "one session a device";
}

}  // namespace
}  // namespace sp::test
