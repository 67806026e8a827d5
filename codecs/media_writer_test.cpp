// MediaWriter: every encoder in every container, timestamps, stream copy and
// colour tags, checked with ffprobe/ffmpeg and libavformat.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "codecs/codec_test_util.h"

namespace sp::codec_test {
namespace {

OutputOptions output(const std::string& url, const std::string& codec) {
  OutputOptions o;
  o.url = url;
  o.codec = codec;
  o.preset = "veryfast";
  return o;
}

void expect_same_times(const std::vector<double>& got, const std::vector<double>& expected, const std::string& what,
                       double tolerance = 1.5e-3) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], tolerance) << what << " frame " << i;
}

bool has_warning(const std::vector<std::string>& warnings, const std::string& part) {
  for (const auto& w : warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

TEST(MediaWriter, EveryEncoderInEveryContainerKeepsFramesTimesAndAudio) {
  TempDir dir;
  const std::string clip = dir.file("in.mkv");
  ffmpeg(picture_source("160x120", 25, "matrix") + " " + tone_source("matrix") +
         " -t 0.8 -c:v libx264 -pix_fmt yuv420p -c:a aac " + clip);
  const std::vector<double> times = probe_frame_times(clip);
  ASSERT_EQ(times.size(), 20u);
  const std::vector<std::string> audio = packet_payloads(clip, AVMEDIA_TYPE_AUDIO);
  ASSERT_GT(audio.size(), 10u);
  const std::vector<std::string> input_md5 = frame_md5s(clip, "yuv420p");

  // Which containers hold which codec (FFmpeg's own muxers decide; this is the
  // documented matrix the writer must follow).
  const std::map<std::string, std::set<std::string>> holds = {
      {"libx264", {"mp4", "mkv", "mov", "avi", "nut"}},
      {"ffv1", {"mkv", "avi", "nut"}},
      {"png", {"mp4", "mov", "avi", "nut"}},
      {"rawvideo", {"mkv", "mov", "avi", "nut", "y4m"}},
  };
  for (const auto& [codec, containers] : holds) {
    for (const std::string ext : {"mp4", "mkv", "mov", "avi", "nut", "y4m"}) {
      const std::string out = dir.file(codec + "." + ext);
      const std::string what = codec + " in " + ext;
      OutputOptions o = output(out, codec);
      if (!containers.count(ext)) {
        try {
          MediaWriter::preflight(o);
          ADD_FAILURE() << what << ": accepted";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ExitCode::usage) << what << ": " << e.what();
        }
        continue;
      }
      TranscodeResult r;
      ASSERT_NO_THROW(r = transcode(input(clip), o)) << what;
      EXPECT_EQ(r.pts.size(), 20u) << what;
      EXPECT_EQ(decoded_frames(out), 20) << what << " must decode";
      // AVI and Y4M count frames on a constant-rate grid starting at 0: the
      // input's first time (0.023 s after AAC priming) is not representable.
      const bool frame_grid = ext == "avi" || ext == "y4m";
      expect_same_times(probe_frame_times(out), times, what, frame_grid ? 0.0401 : 1.5e-3);
      if (ext == "y4m") {
        EXPECT_TRUE(has_warning(r.warnings, "stream #1 (aac audio) dropped: yuv4mpegpipe carries no audio")) << what;
        EXPECT_TRUE(packet_payloads(out, AVMEDIA_TYPE_AUDIO).empty());
      } else {
        EXPECT_EQ(packet_payloads(out, AVMEDIA_TYPE_AUDIO), audio) << what << ": audio packets changed";
        EXPECT_TRUE(r.warnings.empty()) << what << ": " << r.warnings.front();
      }
      if (codec == "rawvideo" && ext != "mov") {  // QuickTime has no raw planar YUV: rgb24 there
        EXPECT_EQ(probe_stream(out, "v:0", "pix_fmt"), "yuv420p\n") << what;
        EXPECT_EQ(frame_md5s(out, "yuv420p"), input_md5) << what << " is not lossless";
      }
    }
  }
}

TEST(MediaWriter, LosslessEncodersGiveBackTheExactPictures) {
  TempDir dir;
  const std::string yuv = dir.file("in.mkv"), rgb = dir.file("in_rgb.nut");
  ffmpeg(picture_source("96x64", 25, "lossless") + " -frames:v 10 -c:v libx264 -pix_fmt yuv420p " + yuv);
  ffmpeg(picture_source("96x64", 25, "lossless-rgb") + " -frames:v 10 -c:v png -pix_fmt rgb24 " + rgb);
  {
    OutputOptions o = output(dir.file("ffv1_420.mkv"), "ffv1");
    o.pixel_format = "yuv420p";
    transcode(input(yuv), o);
    EXPECT_EQ(frame_md5s(o.url, "yuv420p"), frame_md5s(yuv, "yuv420p"));
  }
  {
    OutputOptions o = output(dir.file("ffv1_rgb.mkv"), "ffv1");  // RGB input: bgr0, lossless
    transcode(input(rgb), o);
    EXPECT_NE(probe_stream(o.url, "v:0", "pix_fmt").find("bgr0"), std::string::npos);
    EXPECT_EQ(frame_md5s(o.url, "rgb24"), frame_md5s(rgb, "rgb24"));
  }
  {
    OutputOptions o = output(dir.file("seq_%04d.png"), "");
    transcode(input(rgb), o);
    EXPECT_TRUE(std::filesystem::exists(dir.file("seq_0001.png")));
    EXPECT_TRUE(std::filesystem::exists(dir.file("seq_0010.png")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("seq_0011.png")));
    EXPECT_EQ(frame_md5s(o.url, "rgb24"), frame_md5s(rgb, "rgb24"));
    // And the sequence reads back as a 10-frame video.
    MediaReader sequence(input(o.url));
    MediaItem item;
    int frames = 0;
    while (sequence.next(item)) frames += item.kind == MediaItem::Kind::video;
    EXPECT_EQ(frames, 10);
    EXPECT_FALSE(sequence.data_error());
  }
}

TEST(MediaWriter, VariableFrameRateStaysVariable) {
  TempDir dir;
  const std::string clip = dir.file("vfr.mkv");
  ffmpeg(picture_source("128x96", 25, "vfr-out") + " " + tone_source("vfr-out") +
         " -frames:v 30 -t 3 -vf \"settb=1/1000,setpts='if(lt(N,10),N*0.04,if(lt(N,20),0.4+(N-10)*0.1,"
         "1.4+(N-20)*0.06))/TB'\" -fps_mode vfr -enc_time_base 1:1000 -c:v libx264 -pix_fmt yuv420p -c:a aac " +
         clip);
  const std::vector<double> times = probe_frame_times(clip);
  ASSERT_EQ(times.size(), 30u);
  for (const std::string ext : {"mkv", "mp4", "mov", "nut"}) {
    const std::string out = dir.file("out." + ext);
    transcode(input(clip), output(out, "libx264"));
    expect_same_times(probe_frame_times(out), times, ext);
    EXPECT_EQ(packet_payloads(out, AVMEDIA_TYPE_AUDIO), packet_payloads(clip, AVMEDIA_TYPE_AUDIO)) << ext;
  }
  // AVI has one frame per tick of a constant rate: times are rounded to it.
  const TranscodeResult avi = transcode(input(clip), output(dir.file("out.avi"), "libx264"));
  EXPECT_EQ(decoded_frames(dir.file("out.avi")), 30);
  EXPECT_TRUE(has_warning(avi.warnings, "avi keeps a constant frame rate: frame times are rounded to steps of")) << avi.warnings.size();
}

TEST(MediaWriter, ResolutionChangeKeepsTheFirstSize) {
  TempDir dir;
  const std::string a = dir.file("a.ts"), b = dir.file("b.ts"), joined = dir.file("joined.ts");
  ffmpeg(picture_source("160x120", 25, "res-a") + " -t 1 -c:v libx264 -pix_fmt yuv420p " + a);
  ffmpeg(picture_source("96x64", 25, "res-b") + " -t 1 -c:v libx264 -pix_fmt yuv420p -output_ts_offset 1 " + b);
  ASSERT_EQ(run("cat " + quote(a) + " " + quote(b) + " > " + quote(joined)).code, 0);
  const std::string out = dir.file("out.mkv");
  const TranscodeResult r = transcode(input(joined), output(out, "libx264"));
  ASSERT_EQ(r.sizes.size(), 50u);
  EXPECT_EQ(r.sizes.back(), (Size{96, 64}));
  EXPECT_EQ(decoded_frames(out), 50);
  EXPECT_EQ(probe_stream(out, "v:0", "width,height"), "160\n120\n");
  // The two halves overlap by two frames in time (an artefact of joining two
  // transport streams): the writer moves those to the next free slot.
  const std::vector<double> times = probe_frame_times(out), in_times = probe_frame_times(joined);
  ASSERT_EQ(times.size(), 50u);
  for (size_t i = 1; i < times.size(); ++i) EXPECT_GT(times[i], times[i - 1]) << i;
  for (size_t i = 0; i < 25; ++i) EXPECT_NEAR(times[i], in_times[i], 1.5e-3) << i;
}

TEST(MediaWriter, StreamsTheContainerCannotCarryAreDroppedWithAWarning) {
  TempDir dir;
  const std::string srt = dir.file("subs.srt"), clip = dir.file("in.mkv");
  std::ofstream(srt) << "1\n00:00:00,100 --> 00:00:00,500\nhello " << seed_for("srt") % 1000
                     << "\n\n2\n00:00:00,600 --> 00:00:00,900\nworld\n\n";
  ffmpeg(picture_source("96x64", 25, "copy") + " " + tone_source("copy") + " -i " + quote(srt) +
         " -map 0:v -map 1:a -map 2:s -t 1 -c:v libx264 -pix_fmt yuv420p -c:a pcm_s16le -c:s srt " + clip);
  const auto audio = packet_payloads(clip, AVMEDIA_TYPE_AUDIO);
  const auto subtitles = packet_payloads(clip, AVMEDIA_TYPE_SUBTITLE);
  ASSERT_EQ(subtitles.size(), 2u);

  const TranscodeResult mp4 = transcode(input(clip), output(dir.file("out.mp4"), "libx264"));
  EXPECT_TRUE(has_warning(mp4.warnings, "stream #1 (pcm_s16le audio) dropped: mp4 cannot carry pcm_s16le"));
  EXPECT_TRUE(has_warning(mp4.warnings, "stream #2 (subrip subtitle) dropped: mp4"));
  EXPECT_EQ(mp4.warnings.size(), 2u);
  EXPECT_EQ(decoded_frames(dir.file("out.mp4")), 25);
  EXPECT_TRUE(packet_payloads(dir.file("out.mp4"), AVMEDIA_TYPE_AUDIO).empty());

  const TranscodeResult mkv = transcode(input(clip), output(dir.file("out.mkv"), "libx264"));
  EXPECT_TRUE(mkv.warnings.empty());
  EXPECT_EQ(packet_payloads(dir.file("out.mkv"), AVMEDIA_TYPE_AUDIO), audio);
  EXPECT_EQ(packet_payloads(dir.file("out.mkv"), AVMEDIA_TYPE_SUBTITLE), subtitles);

  const TranscodeResult mov = transcode(input(clip), output(dir.file("out.mov"), "libx264"));
  EXPECT_EQ(packet_payloads(dir.file("out.mov"), AVMEDIA_TYPE_AUDIO), audio);
  EXPECT_TRUE(has_warning(mov.warnings, "stream #2 (subrip subtitle) dropped"));
}

TEST(MediaWriter, ColourMatrixAndRangeAreTaggedOnTheOutput) {
  TempDir dir;
  struct Case {
    std::string make;  // input picture and tags
    std::string codec;
    ColorMatrix matrix;
    ColorRange range;
    std::string tags;  // color_range, color_space, color_primaries as ffprobe prints them
  };
  const std::vector<Case> cases = {
      {"-s 320x240 -c:v libx264 -pix_fmt yuv420p -colorspace smpte170m -color_primaries smpte170m "
       "-color_trc smpte170m -color_range tv", "libx264", ColorMatrix::bt601, ColorRange::limited,
       "tv\nsmpte170m\nsmpte170m\n"},
      {"-s 320x240 -c:v libx264 -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 "
       "-color_range pc", "libx264", ColorMatrix::bt709, ColorRange::full, "pc\nbt709\nbt709\n"},
      {"-s 320x240 -c:v png -pix_fmt rgb24", "libx264", ColorMatrix::bt601, ColorRange::limited,
       "tv\nsmpte170m\nsmpte170m\n"},
      {"-s 1280x720 -c:v png -pix_fmt rgb24", "libx264", ColorMatrix::bt709, ColorRange::limited,
       "tv\nbt709\nbt709\n"},
      {"-s 320x240 -c:v libx264 -pix_fmt yuv420p -colorspace bt709 -color_range pc", "ffv1", ColorMatrix::bt709,
       ColorRange::full, "pc\nbt709\nbt709\n"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string in = dir.file("in" + std::to_string(i) + ".nut");
    const std::string out = dir.file("out" + std::to_string(i) + ".mkv");
    ffmpeg(picture_source("320x240", 25, "tags") + " -frames:v 2 " + cases[i].make + " " + in);
    MediaReader reader(input(in));
    MediaWriter writer(output(out, cases[i].codec), reader.video(), reader.video().size, reader);
    EXPECT_EQ(writer.encoder_color().matrix, cases[i].matrix) << "case " << i;
    EXPECT_EQ(writer.encoder_color().range, cases[i].range) << "case " << i;
    Converter converter;
    MediaItem item;
    while (reader.next(item))
      if (item.kind == MediaItem::Kind::video)
        writer.write_video(converter.convert(item.frame, writer.encoder_format(), writer.output_size(),
                                             writer.encoder_color()),
                           item.frame.pts, item.frame.duration);
    writer.finish();
    EXPECT_EQ(probe_stream(out, "v:0", "color_range,color_space,color_primaries"), cases[i].tags) << "case " << i;
    EXPECT_EQ(decoded_frames(out), 2) << "case " << i;
  }
}

}  // namespace
}  // namespace sp::codec_test
