// MediaReader against ffprobe/ffmpeg/libavformat as the oracle.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "codecs/codec_test_util.h"

namespace sp::codec_test {
namespace {

// 40 ms steps, then 100 ms, then 60 ms, on a millisecond clock.
const std::string kIrregularTimes =
    "-vf \"settb=1/1000,setpts='if(lt(N,10),N*0.04,if(lt(N,20),0.4+(N-10)*0.1,1.4+(N-20)*0.06))/TB'\" "
    "-fps_mode vfr -enc_time_base 1:1000";

struct ReadAll {
  std::vector<int64_t> pts;
  std::vector<Size> sizes;
  std::vector<std::string> packets;  // copied packet payloads
  std::vector<ColorSpec> colors;
  int64_t frames = 0;
};

ReadAll read_all(MediaReader& reader) {
  ReadAll r;
  MediaItem item;
  while (reader.next(item)) {
    if (item.kind == MediaItem::Kind::packet) {
      r.packets.emplace_back(reinterpret_cast<const char*>(item.packet->data), size_t(item.packet->size));
      continue;
    }
    EXPECT_EQ(item.kind, MediaItem::Kind::video);
    const PlanarView v = item.frame.view();
    EXPECT_EQ(v.format, item.frame.format);
    EXPECT_NE(v.plane[0], nullptr);
    EXPECT_GT(item.frame.duration, 0);
    r.pts.push_back(item.frame.pts);
    r.sizes.push_back({v.width, v.height});
    r.colors.push_back(item.frame.color);
    ++r.frames;
  }
  EXPECT_EQ(item.kind, MediaItem::Kind::end);
  EXPECT_FALSE(reader.next(item)) << "the end stays the end";
  return r;
}

void expect_times(const std::vector<int64_t>& pts, AVRational tb, const std::vector<double>& seconds) {
  ASSERT_EQ(pts.size(), seconds.size());
  for (size_t i = 0; i < pts.size(); ++i) EXPECT_NEAR(pts[i] * av_q2d(tb), seconds[i], 1e-3) << "frame " << i;
}

TEST(MediaReader, ConstantRateClipGivesEveryFrameWithItsTimeAndTheAudioPackets) {
  TempDir dir;
  const std::string clip = dir.file("cfr.mkv");
  ffmpeg(picture_source("160x120", 25, "cfr") + " " + tone_source("cfr") +
         " -t 1 -c:v libx264 -bf 2 -pix_fmt yuv420p -c:a aac " + clip);
  MediaReader reader(input(clip));
  EXPECT_EQ(reader.video().size, (Size{160, 120}));
  EXPECT_EQ(reader.video().codec_name, "h264");
  EXPECT_EQ(reader.video().frame_rate.num / reader.video().frame_rate.den, 25);
  ASSERT_EQ(reader.copy_streams().size(), 1u);
  EXPECT_EQ(reader.copy_streams()[0].codecpar->codec_id, AV_CODEC_ID_AAC);
  const ReadAll r = read_all(reader);
  EXPECT_EQ(r.frames, 25);
  expect_times(r.pts, reader.video().time_base, probe_frame_times(clip));
  EXPECT_EQ(r.packets, packet_payloads(clip, AVMEDIA_TYPE_AUDIO));
  EXPECT_FALSE(reader.data_error());
  // The pictures are the decoder's: same bytes as ffmpeg decodes them.
  MediaReader again(input(clip));
  MediaItem item;
  const std::vector<std::string> md5 = frame_md5s(clip, "yuv420p");
  ASSERT_EQ(md5.size(), 25u);
  for (int i = 0; i < 3; ++i) {
    do ASSERT_TRUE(again.next(item));
    while (item.kind != MediaItem::Kind::video);
    const PlanarView v = item.frame.view();
    ASSERT_EQ(v.format, PixelFormat::yuv420p);
    EXPECT_EQ(picture_md5(v), md5[i]) << "frame " << i;
  }
}

// The transcoder closes the decoder while the writer still encodes what it
// gave: pictures already delivered outlive it, and what was probed stays.
TEST(MediaReader, ClosedDecoderEndsTheFramesAndPicturesAlreadyGivenStayIntact) {
  TempDir dir;
  const std::string clip = dir.file("in.mkv");
  ffmpeg(picture_source("160x120", 25, "close") + " -t 1 -c:v libx264 -bf 2 -pix_fmt yuv420p " + clip);
  const std::vector<std::string> md5 = frame_md5s(clip, "yuv420p");
  ASSERT_EQ(md5.size(), 25u);
  MediaReader reader(input(clip));
  MediaItem kept;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(reader.next(kept));
  ASSERT_EQ(kept.kind, MediaItem::Kind::video);
  reader.close_decoder();
  MediaItem after;
  EXPECT_FALSE(reader.next(after));
  EXPECT_EQ(after.kind, MediaItem::Kind::end);
  EXPECT_EQ(reader.video().size, (Size{160, 120}));
  EXPECT_EQ(reader.video().codec_name, "h264");
  EXPECT_FALSE(reader.data_error());
  ASSERT_EQ(kept.frame.view().format, PixelFormat::yuv420p);
  EXPECT_EQ(picture_md5(kept.frame.view()), md5[4]) << "the fifth picture, read after the close";
}

// A batch decodes its short clips in software (orchestration/batch.cpp): the
// reader counts the input's pixels from its header, and only under --hwdec auto.
TEST(MediaReader, ShortInputDecodesInSoftwareUnderAutoAndOnlyWhenShortEnough) {
  TempDir dir;
  const std::string clip = dir.file("short.mp4");
  ffmpeg(picture_source("160x120", 25, "short input") + " -frames:v 10 -c:v libx264 -pix_fmt yuv420p " + clip);
  const double pixels = 10.0 * 160 * 120;
  const auto reason_with = [&](double limit, HwDecode mode) {
    InputOptions o = input(clip);
    o.hwdec = mode;
    o.software_decode_up_to_pixels = limit;
    o.short_input_reason = "short";
    try {
      MediaReader reader(o);
      const ReadAll r = read_all(reader);
      EXPECT_EQ(r.frames, 10);
      return reader.software_decode_reason();
    } catch (const Error& e) {
      return std::string("error: ") + e.what();
    }
  };
  EXPECT_EQ(reason_with(pixels, HwDecode::automatic), "short");
  EXPECT_NE(reason_with(pixels - 1, HwDecode::automatic), "short") << "one pixel too many";
  EXPECT_NE(reason_with(0, HwDecode::automatic), "short") << "0: never";
  EXPECT_NE(reason_with(pixels, HwDecode::nvdec), "short") << "--hwdec nvdec is never overruled";
}

TEST(MediaReader, VariableFrameRateKeepsItsTimestamps) {
  TempDir dir;
  const std::string clip = dir.file("vfr.mkv");
  ffmpeg(picture_source("128x96", 25, "vfr") +
         " -frames:v 30 " + kIrregularTimes + " -c:v libx264 -pix_fmt yuv420p " + clip);
  MediaReader reader(input(clip));
  const ReadAll r = read_all(reader);
  const std::vector<double> expected = probe_frame_times(clip);
  ASSERT_EQ(expected.size(), 30u);
  expect_times(r.pts, reader.video().time_base, expected);
  const double tb = av_q2d(reader.video().time_base);
  EXPECT_NEAR((r.pts[12] - r.pts[11]) * tb, 0.1, 2e-3);
  EXPECT_NEAR((r.pts[25] - r.pts[24]) * tb, 0.06, 2e-3);
}

TEST(MediaReader, ResolutionChangeMidStreamIsCarriedByTheFrames) {
  TempDir dir;
  const std::string a = dir.file("a.ts"), b = dir.file("b.ts"), joined = dir.file("joined.ts");
  ffmpeg(picture_source("160x120", 25, "a") + " -t 1 -c:v libx264 -pix_fmt yuv420p " + a);
  ffmpeg(picture_source("96x64", 25, "b") + " -t 1 -c:v libx264 -pix_fmt yuv420p -output_ts_offset 1 " + b);
  ASSERT_EQ(run("cat " + quote(a) + " " + quote(b) + " > " + quote(joined)).code, 0);
  MediaReader reader(input(joined));
  const ReadAll r = read_all(reader);
  ASSERT_EQ(r.frames, 50);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(r.sizes[i], (Size{160, 120})) << i;
  for (int i = 25; i < 50; ++i) EXPECT_EQ(r.sizes[i], (Size{96, 64})) << i;
  EXPECT_EQ(reader.video().size, (Size{160, 120}));
  EXPECT_FALSE(reader.data_error()) << *reader.data_error();
}

void expect_truncated_read(const std::string& full, const std::string& cut, int total) {
  std::filesystem::copy_file(full, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(full) * 6 / 10 + 97);
  MediaReader reader(input(cut));
  const ReadAll r = read_all(reader);
  EXPECT_GT(r.frames, total / 4) << cut;
  EXPECT_LT(r.frames, total) << cut;
  ASSERT_TRUE(reader.data_error()) << cut << ": truncation must be reported";
  EXPECT_NE(reader.data_error()->find(cut), std::string::npos) << *reader.data_error();
  // What was delivered is a prefix of what ffmpeg decodes from the cut file
  // (ffmpeg goes on with concealed pictures; frames whose packets were cut
  // off in decode order are missing for both).
  const std::vector<double> times = probe_frame_times(cut);
  ASSERT_LE(r.pts.size(), times.size());
  for (size_t i = 0; i < r.pts.size(); ++i)
    if (!std::isnan(times[i])) {  // AVI: no time for the last frames, the reader counts on
      EXPECT_NEAR(r.pts[i] * av_q2d(reader.video().time_base), times[i], 1e-3) << cut << " frame " << i;
    }
}

TEST(MediaReader, TruncatedFilesYieldTheGoodFramesThenADataError) {
  TempDir dir;
  const std::string src = picture_source("160x120", 25, "trunc") + " " + tone_source("trunc") + " -t 2 ";
  ffmpeg(src + "-c:v libx264 -pix_fmt yuv420p -c:a aac -f mpegts " + dir.file("full.ts"));
  ffmpeg(src + "-c:v libx264 -pix_fmt yuv420p -c:a aac " + dir.file("full.mkv"));
  ffmpeg(src + "-c:v libx264 -pix_fmt yuv420p -c:a aac -movflags +faststart " + dir.file("full.mp4"));
  ffmpeg(src + "-c:v libx264 -pix_fmt yuv420p -c:a aac " + dir.file("full.avi"));
  // NUT does not flag a cut-off packet: FFV1's slice checksums find it.
  ffmpeg(src + "-c:v ffv1 -level 3 -slicecrc 1 -c:a aac " + dir.file("full.nut"));
  ffmpeg(src + "-an -pix_fmt yuv420p " + dir.file("full.y4m"));
  expect_truncated_read(dir.file("full.ts"), dir.file("cut.ts"), 50);
  expect_truncated_read(dir.file("full.mkv"), dir.file("cut.mkv"), 50);
  expect_truncated_read(dir.file("full.mp4"), dir.file("cut.mp4"), 50);
  expect_truncated_read(dir.file("full.avi"), dir.file("cut.avi"), 50);
  expect_truncated_read(dir.file("full.nut"), dir.file("cut.nut"), 50);
  expect_truncated_read(dir.file("full.y4m"), dir.file("cut.y4m"), 50);
}

bool some_demuxer_opens(const std::string& path) {
  AVFormatContext* format = nullptr;
  if (avformat_open_input(&format, path.c_str(), nullptr, nullptr) < 0) return false;
  avformat_close_input(&format);
  return true;
}

TEST(MediaReader, RandomBytesAreADataErrorAtOpenAndAMissingFileIsNoInput) {
  TempDir dir;
  const std::string noise = dir.file("noise.mp4");
  std::mt19937_64 rng(seed_for("noise"));
  // Now and then a draw probes as a raw stream (seed 83024840407225: H.263
  // at 1408x1152), which is FFmpeg's call, not the reader's: such draws are
  // drawn again, so the bytes are ones no demuxer opens.
  int draws = 0;
  do {
    std::ofstream f(noise, std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 65536; ++i) f.put(char(rng()));
  } while (some_demuxer_opens(noise) && ++draws < 100);
  ASSERT_LT(draws, 100) << "every draw opened as some format";
  try {
    MediaReader reader(input(noise));
    FAIL() << "random bytes opened as video";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::data_error) << e.what();
    EXPECT_NE(std::string(e.what()).find(noise), std::string::npos) << e.what();
  }
  try {
    MediaReader reader(input(dir.file("missing.mkv")));
    FAIL() << "a missing file opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::no_input) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing.mkv"), std::string::npos) << e.what();
  }
  InputOptions raw = input(noise);
  raw.format = "rawvideo";
  try {
    MediaReader reader(raw);
    FAIL() << "rawvideo without a size opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
  }
  raw.format = "no-such-demuxer";
  try {
    MediaReader reader(raw);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
  }
}

TEST(MediaReader, StartDurationAndFrameLimits) {
  TempDir dir;
  const std::string clip = dir.file("clip.mkv");
  ffmpeg(picture_source("96x64", 25, "limits") + " " + tone_source("limits") +
         " -t 2 -g 10 -c:v libx264 -pix_fmt yuv420p -c:a aac " + clip);
  const std::vector<double> times = probe_frame_times(clip);
  ASSERT_EQ(times.size(), 50u);
  InputOptions o = input(clip);
  o.start_seconds = 0.6;
  o.duration_seconds = 0.4;
  MediaReader cut(o);
  const ReadAll r = read_all(cut);
  ASSERT_EQ(r.frames, 10);
  for (int i = 0; i < 10; ++i)  // moved back by --start
    EXPECT_NEAR(r.pts[i] * av_q2d(cut.video().time_base), times[15 + i] - 0.6, 1e-3) << i;
  EXPECT_GT(r.packets.size(), 10u);
  EXPECT_LT(r.packets.size(), 30u) << "audio outside the window is dropped";

  InputOptions first = input(clip);
  first.max_frames = 7;
  MediaReader seven(first);
  EXPECT_EQ(read_all(seven).frames, 7);
  EXPECT_EQ(seven.video().frame_count_estimate, 7);
}

TEST(MediaReader, ColourTagsAreHonoured) {
  TempDir dir;
  struct Case {
    std::string args, size;
    ColorMatrix matrix;
    ColorRange range;
  };
  const std::vector<Case> cases = {
      {"-colorspace smpte170m -color_primaries smpte170m -color_trc smpte170m -color_range tv", "320x240",
       ColorMatrix::bt601, ColorRange::limited},
      {"-colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range pc", "320x240", ColorMatrix::bt709,
       ColorRange::full},
      {"-colorspace bt2020nc -color_primaries bt2020 -color_trc bt2020-10 -color_range tv", "320x240",
       ColorMatrix::bt2020, ColorRange::limited},
      {"", "320x240", ColorMatrix::bt601, ColorRange::limited},   // untagged SD
      {"", "1280x720", ColorMatrix::bt709, ColorRange::limited},  // untagged HD
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string name = "c";  // appended, not "c" + ...: GCC 12 warns falsely (-Wrestrict) on that
    name += std::to_string(i) + ".mkv";
    const std::string clip = dir.file(name);
    ffmpeg(picture_source(cases[i].size, 25, "colour") + " -frames:v 3 -c:v libx264 -preset ultrafast -pix_fmt yuv420p " +
           cases[i].args + " " + clip);
    MediaReader reader(input(clip));
    const ReadAll r = read_all(reader);
    ASSERT_EQ(r.frames, 3) << i;
    EXPECT_EQ(r.colors[0].matrix, cases[i].matrix) << "case " << i;
    EXPECT_EQ(r.colors[0].range, cases[i].range) << "case " << i;
    EXPECT_EQ(reader.video().color.matrix, cases[i].matrix) << "case " << i;
    EXPECT_EQ(reader.video().color.range, cases[i].range) << "case " << i;
  }
}

TEST(MediaReader, SingleImagesAreOneFrameVideos) {
  TempDir dir;
  const std::string jpg = dir.file("photo.jpg"), png = dir.file("photo.png"), gif = dir.file("photo.gif");
  ffmpeg(picture_source("200x150", 25, "photo") + " -frames:v 1 " + jpg);
  ffmpeg(picture_source("200x150", 25, "photo") + " -frames:v 1 " + png);
  ffmpeg(picture_source("200x150", 25, "photo") + " -frames:v 1 " + gif);
  {
    MediaReader reader(input(jpg));
    const ReadAll r = read_all(reader);
    ASSERT_EQ(r.frames, 1);
    EXPECT_EQ(reader.video().format, PixelFormat::yuv420p);
    EXPECT_EQ(r.colors[0].range, ColorRange::full) << "JPEG is full range";
    EXPECT_EQ(r.colors[0].matrix, ColorMatrix::bt601) << "JPEG is BT.601";
  }
  {
    MediaReader reader(input(png));
    const ReadAll r = read_all(reader);
    ASSERT_EQ(r.frames, 1);
    EXPECT_EQ(reader.video().format, PixelFormat::rgb24);
    EXPECT_EQ(r.sizes[0], (Size{200, 150}));
  }
  {
    // Palette pictures are converted to RGBA (the palette may carry alpha).
    MediaReader reader(input(gif));
    MediaItem item;
    ASSERT_TRUE(reader.next(item));
    ASSERT_EQ(item.frame.format, PixelFormat::rgba);
    const std::vector<std::string> md5 = frame_md5s(gif, "rgba");
    ASSERT_EQ(md5.size(), 1u);
    const PlanarView v = item.frame.view();
    const std::string file = dir.file("gif.rgba");
    {
      std::ofstream f(file, std::ios::binary);
      for (int y = 0; y < v.height; ++y) f.write(reinterpret_cast<const char*>(v.plane[0] + y * v.pitch[0]), v.width * 4);
    }
    EXPECT_EQ(run("md5sum " + quote(file)).output.substr(0, 32), md5[0]);
  }
}

TEST(MediaReader, RawVideoInputIsSplitIntoFrames) {
  TempDir dir;
  const int w = 48, h = 32, frames = 5;
  std::mt19937_64 rng(seed_for("raw"));
  std::vector<char> bytes(size_t(w) * h * 4 * frames);
  for (auto& b : bytes) b = char(rng());
  const std::string file = dir.file("in.rgba");
  std::ofstream(file, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  InputOptions o = input(file);
  o.format = "rawvideo";
  o.pixel_format = "rgba";
  o.size = Size{w, h};
  o.rate = 60;
  MediaReader reader(o);
  MediaItem item;
  for (int f = 0; f < frames; ++f) {
    ASSERT_TRUE(reader.next(item));
    ASSERT_EQ(item.frame.format, PixelFormat::rgba);
    EXPECT_NEAR(item.frame.pts * av_q2d(reader.video().time_base), f / 60.0, 1e-6);
    const PlanarView v = item.frame.view();
    for (int y = 0; y < h; ++y)
      ASSERT_EQ(std::memcmp(v.plane[0] + y * v.pitch[0], bytes.data() + (size_t(f) * h + y) * w * 4, w * 4), 0);
  }
  EXPECT_FALSE(reader.next(item));
  EXPECT_FALSE(reader.data_error());
}

// With --hwdec, the reader asks the gate (the transcoder: "is the CUDA
// backend up?") after probing and before choosing a decoder, once; its
// refusal means software decoding with that reason, or exit 69 when NVDEC was
// demanded.
TEST(MediaReader, HardwareGateRefusalDecodesInSoftwareOrFailsWhenNvdecIsDemanded) {
  TempDir dir;
  const std::string clip = dir.file("gate.mkv");
  ffmpeg(picture_source("160x120", 25, "gate") + " -t 0.4 -c:v libx264 -pix_fmt yuv420p " + clip);
  int asked = 0;
  InputOptions o = input(clip);
  o.hwdec = HwDecode::automatic;
  o.hardware_gate = [&asked]() -> std::optional<std::string> {
    ++asked;
    return "the CPU backend is in use";
  };
  MediaReader reader(o);
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(reader.hardware_decoder_attached());
  EXPECT_EQ(reader.software_decode_reason(), "the CPU backend is in use");
  EXPECT_EQ(read_all(reader).frames, 10);
  EXPECT_EQ(asked, 1);

  o.hwdec = HwDecode::nvdec;
  try {
    MediaReader demanded(o);
    ADD_FAILURE() << "--hwdec nvdec opened although the gate refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::unavailable);
    EXPECT_NE(std::string(e.what()).find("--hwdec nvdec: the CPU backend is in use"), std::string::npos) << e.what();
  }
  EXPECT_EQ(asked, 2);

  o.hwdec = HwDecode::none;  // not asked at all
  MediaReader software(o);
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace sp::codec_test
