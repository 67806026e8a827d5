// MediaWriter: every encoder in every container, timestamps, stream copy and
// colour tags, checked with ffprobe/ffmpeg and libavformat.
#include <algorithm>
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
                       double tolerance = 1.5e-3, double shift = 0) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i] + shift, tolerance) << what << " frame " << i;
}

// NUT and AVI store no time below zero: their muxer moves every stream later
// by as much as the input's earliest packet (ffprobe's format start_time) lies
// below. FFmpeg 7's Matroska keeps the AAC encoder's priming there (the audio
// starts at -0.023 s); 5.1 moved every stream later instead. The other
// containers keep the times as they are.
double container_shift(const std::string& ext, const std::string& input) {
  if (ext != "nut" && ext != "avi") return 0;
  const std::string start = run("ffprobe -v error -show_entries format=start_time -of csv=p=0 " + quote(input), true).output;
  return std::max(0.0, -std::stod(start));
}

// ffprobe's time base of the file's first video stream, in seconds.
double video_time_base(const std::string& file) {
  const std::string tb = probe_stream(file, "v:0", "time_base");
  const size_t slash = tb.find('/');
  return slash == std::string::npos ? std::nan("") : std::stod(tb.substr(0, slash)) / std::stod(tb.substr(slash + 1));
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
      expect_same_times(probe_frame_times(out), times, what, frame_grid ? 0.0401 : 1.5e-3, container_shift(ext, clip));
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
    expect_same_times(probe_frame_times(out), times, ext, 1.5e-3, container_shift(ext, clip));
    EXPECT_EQ(packet_payloads(out, AVMEDIA_TYPE_AUDIO), packet_payloads(clip, AVMEDIA_TYPE_AUDIO)) << ext;
  }
  // AVI has one frame per tick of a constant rate, the output's time base:
  // times are rounded to it, and a warning says so where that moves a frame by
  // more than a tenth of a tick (less is the input clock's own rounding to ms).
  // The rate is the one the input declares, which is FFmpeg's choice: 5.1
  // writes 25 fps into this clip, whose steps do not fit it; 7.1 writes none,
  // and 50 fps is guessed. AVI has no start time either: its first frame is at
  // 0, and the others within half a tick of the grid, plus the muxer's shift
  // (container_shift) rounded up to a whole tick.
  const std::string avi_file = dir.file("out.avi");
  const TranscodeResult avi = transcode(input(clip), output(avi_file, "libx264"));
  EXPECT_EQ(decoded_frames(avi_file), 30);
  const double tick = video_time_base(avi_file);
  const std::vector<double> avi_times = probe_frame_times(avi_file);
  ASSERT_EQ(avi_times.size(), times.size());
  EXPECT_EQ(avi_times[0], 0.0);
  expect_same_times({avi_times.begin() + 1, avi_times.end()}, {times.begin() + 1, times.end()}, "avi (from frame 1)",
                    1.5 * tick + 1e-3, container_shift("avi", clip));
  bool rounded = false;
  for (const double t : times) {
    const double since = t - times[0];
    rounded |= std::fabs(std::round(since / tick) * tick - since) > tick / 10;
  }
  EXPECT_EQ(has_warning(avi.warnings, "avi keeps a constant frame rate: frame times are rounded to steps of"), rounded)
      << "tick " << tick << " s, " << avi.warnings.size() << " warnings";
}

// The rounding of the test above, on a clip whose rate no FFmpeg guesses: a
// 25 fps one, one of whose frames comes 13 ms late.
TEST(MediaWriter, AviRoundsFrameTimesOffItsGridWithAWarning) {
  TempDir dir;
  const std::string clip = dir.file("cfr.mkv"), out = dir.file("out.avi");
  ffmpeg(picture_source("96x64", 25, "avi-grid") + " -frames:v 10 -c:v libx264 -pix_fmt yuv420p " + clip);
  MediaReader reader(input(clip));
  ASSERT_EQ(av_cmp_q(reader.video().frame_rate, AVRational{25, 1}), 0);
  MediaWriter writer(output(out, "libx264"), reader.video(), reader.video().size, reader);
  const int64_t late = av_rescale_q(13, AVRational{1, 1000}, reader.video().time_base);
  ASSERT_GT(late, 0);
  Converter converter;
  MediaItem item;
  std::vector<double> times;
  while (reader.next(item)) {
    if (item.kind != MediaItem::Kind::video) continue;
    const int64_t pts = item.frame.pts + (times.size() == 5 ? late : 0);
    times.push_back(pts * av_q2d(reader.video().time_base));
    writer.write_video(converter.convert(item.frame, writer.encoder_format(), writer.output_size(),
                                         writer.encoder_color()),
                       pts, item.frame.duration);
  }
  writer.finish();
  ASSERT_EQ(times.size(), 10u);
  EXPECT_TRUE(has_warning(writer.warnings(), "avi keeps a constant frame rate: frame times are rounded to steps of 1/25 s"))
      << writer.warnings().size();
  const std::vector<double> avi_times = probe_frame_times(out);
  ASSERT_EQ(avi_times.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_NEAR(avi_times[i] - avi_times[0], 0.04 * double(i), 1e-3) << "frame " << i;
  EXPECT_NEAR(times[5] - times[0], 0.213, 1e-3) << "frame 5 was written late";
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

  // Whether MP4 carries PCM is FFmpeg's: 7.1 writes it (ISO/IEC 23003-5
  // ipcm), 5.1 does not. ffmpeg's own stream copy says which this one does.
  const bool mp4_takes_pcm =
      run("ffmpeg -nostdin -v error -y -i " + quote(clip) + " -map 0:a -c copy " + quote(dir.file("pcm.mp4")), true)
          .code == 0;
  const TranscodeResult mp4 = transcode(input(clip), output(dir.file("out.mp4"), "libx264"));
  EXPECT_TRUE(has_warning(mp4.warnings, "stream #2 (subrip subtitle) dropped: mp4"));
  EXPECT_EQ(decoded_frames(dir.file("out.mp4")), 25);
  if (mp4_takes_pcm) {
    EXPECT_EQ(mp4.warnings.size(), 1u);
    // MP4 keeps PCM in chunks of its own: the samples are what must not change.
    const auto joined = [](const std::vector<std::string>& packets) {
      std::string all;
      for (const std::string& p : packets) all += p;
      return all;
    };
    EXPECT_EQ(joined(packet_payloads(dir.file("out.mp4"), AVMEDIA_TYPE_AUDIO)), joined(audio)) << "PCM samples changed";
    EXPECT_EQ(probe_stream(dir.file("out.mp4"), "a:0", "codec_name"), "pcm_s16le\n");
  } else {
    EXPECT_TRUE(has_warning(mp4.warnings, "stream #1 (pcm_s16le audio) dropped: mp4 cannot carry pcm_s16le"));
    EXPECT_EQ(mp4.warnings.size(), 2u);
    EXPECT_TRUE(packet_payloads(dir.file("out.mp4"), AVMEDIA_TYPE_AUDIO).empty());
  }

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
