// MediaWriter edges: checks before work, stdout, low latency, interrupted
// runs, odd sizes, single images.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "codecs/codec_test_util.h"

namespace sp::codec_test {
namespace {

OutputOptions output(const std::string& url, const std::string& codec = "") {
  OutputOptions o;
  o.url = url;
  o.codec = codec;
  o.preset = "veryfast";
  return o;
}

ExitCode preflight_code(const OutputOptions& o) {
  try {
    MediaWriter::preflight(o);
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::ok;
}

TEST(MediaWriterPreflight, RefusesBadOutputsBeforeAnyWork) {
  TempDir dir;
  const std::string existing = dir.file("exists.mkv");
  std::ofstream(existing) << "keep me";
  EXPECT_EQ(preflight_code(output("/nonexistent-dir/x/out.mkv")), ExitCode::io_error);
  EXPECT_EQ(preflight_code(output(existing)), ExitCode::usage);
  OutputOptions overwrite = output(existing);
  overwrite.overwrite = true;
  EXPECT_EQ(preflight_code(overwrite), ExitCode::ok);
  EXPECT_EQ(run("cat " + quote(existing)).output, "keep me") << "preflight writes nothing";
  std::filesystem::create_directory(dir.file("adir.mkv"));
  OutputOptions directory = output(dir.file("adir.mkv"));
  directory.overwrite = true;
  EXPECT_EQ(preflight_code(directory), ExitCode::io_error);
  if (geteuid() != 0) {  // root writes anywhere
    std::filesystem::create_directory(dir.file("ro"));
    std::filesystem::permissions(dir.file("ro"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    EXPECT_EQ(preflight_code(output(dir.file("ro/out.mkv"))), ExitCode::io_error);
  }
  // Image sequences: the first file counts as the output.
  std::ofstream(dir.file("seq_0001.png")) << "x";
  EXPECT_EQ(preflight_code(output(dir.file("seq_%04d.png"))), ExitCode::usage);

  EXPECT_EQ(preflight_code(output(dir.file("o.mkv"), "nosuchcodec")), ExitCode::usage);
  EXPECT_EQ(preflight_code(output(dir.file("o.mkv"), "aac")), ExitCode::usage) << "not a video encoder";
  EXPECT_EQ(preflight_code(output(dir.file("o.unknownext"))), ExitCode::usage);
  OutputOptions bad_format = output(dir.file("o.mkv"));
  bad_format.format = "nosuchformat";
  EXPECT_EQ(preflight_code(bad_format), ExitCode::usage);
  EXPECT_EQ(preflight_code(output("-")), ExitCode::usage) << "stdout needs -f";
  EXPECT_EQ(preflight_code(output(dir.file("o.mp4"), "ffv1")), ExitCode::usage);
  EXPECT_EQ(preflight_code(output(dir.file("o.mkv"), "png")), ExitCode::usage);
  EXPECT_EQ(preflight_code(output(dir.file("o.y4m"), "libx264")), ExitCode::usage);
  OutputOptions crf = output(dir.file("o.mkv"), "libx264");
  crf.crf = 60;
  EXPECT_EQ(preflight_code(crf), ExitCode::usage);
  OutputOptions preset = output(dir.file("o.mkv"), "libx264");
  preset.preset = "fastest";
  EXPECT_EQ(preflight_code(preset), ExitCode::usage);
  OutputOptions pix = output(dir.file("o.mkv"), "libx264");
  pix.pixel_format = "yuv422p";
  EXPECT_EQ(preflight_code(pix), ExitCode::usage);
  pix = output(dir.file("o.png"));
  pix.pixel_format = "yuv420p";
  EXPECT_EQ(preflight_code(pix), ExitCode::usage) << "png takes RGB";
  OutputOptions raw = output("-");
  raw.format = "rawvideo";
  raw.pixel_format = "rgba";
  EXPECT_EQ(preflight_code(raw), ExitCode::ok);
  OutputOptions y4m = output(dir.file("o.y4m"));
  EXPECT_EQ(preflight_code(y4m), ExitCode::ok);
  y4m.format = "y4m";
  EXPECT_EQ(preflight_code(y4m), ExitCode::ok) << "-f y4m and -f mkv are understood";
  EXPECT_FALSE(std::filesystem::exists(dir.file("o.mkv")));
}

std::string make_clip(const TempDir& dir, const std::string& name, const std::string& size, int frames,
                      const std::string& extra = "-c:v libx264 -pix_fmt yuv420p") {
  const std::string path = dir.file(name);
  ffmpeg(picture_source(size, 25, name) + " -frames:v " + std::to_string(frames) + " " + extra + " " + path);
  return path;
}

TEST(MediaWriter, WritesToStdout) {
  TempDir dir;
  const std::string clip = dir.file("in.ts");  // ADTS AAC: its setup travels in the packets
  ffmpeg(picture_source("96x64", 25, "stdout") + " " + tone_source("stdout") +
         " -frames:v 12 -c:v libx264 -pix_fmt yuv420p -c:a aac " + clip);
  for (const std::string format : {"nut", "mp4", "matroska"}) {
    const std::string captured = dir.file("stdout." + format);
    fflush(stdout);
    const int saved = dup(1);
    const int fd = open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    dup2(fd, 1);
    close(fd);
    OutputOptions o = output("-", "libx264");
    o.format = format;
    TranscodeResult r;
    std::string error;
    try {
      r = transcode(input(clip), o);
    } catch (const std::exception& e) {
      error = e.what();
    }
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    ASSERT_EQ(error, "") << format;
    EXPECT_EQ(r.pts.size(), 12u);
    EXPECT_EQ(decoded_frames(captured), 12) << format;
    if (format == "nut") {
      EXPECT_EQ(packet_payloads(captured, AVMEDIA_TYPE_AUDIO), packet_payloads(clip, AVMEDIA_TYPE_AUDIO));
    } else {  // the header went out before the first audio packet could describe the stream
      ASSERT_EQ(r.warnings.size(), 1u) << format;
      EXPECT_NE(r.warnings[0].find("stream #1 (aac audio) dropped: " + format + " to a pipe needs the AAC setup"),
                std::string::npos)
          << r.warnings[0];
    }
  }
}

TEST(MediaWriter, LowLatencyFlushesEveryFrameWithoutReordering) {
  TempDir dir;
  const std::string clip = make_clip(dir, "in.nut", "64x48", 10, "-c:v rawvideo -pix_fmt rgba");
  for (const std::string codec : {"rawvideo", "libx264"}) {
    const std::string out = dir.file("live_" + codec + ".nut");
    OutputOptions o = output(out, codec);
    o.low_latency = true;
    InputOptions in = input(clip);
    in.low_latency = true;
    MediaReader reader(in);
    MediaWriter writer(o, reader.video(), reader.video().size, reader);
    Converter converter;
    MediaItem item;
    uintmax_t last_size = std::filesystem::file_size(out);
    int frames = 0;
    while (reader.next(item)) {
      writer.write_video(converter.convert(item.frame, writer.encoder_format(), writer.output_size(),
                                           writer.encoder_color()),
                         item.frame.pts, item.frame.duration);
      const uintmax_t size = std::filesystem::file_size(out);
      EXPECT_GT(size, last_size) << codec << ": frame " << frames << " is not on disk after write_video";
      last_size = size;
      ++frames;
    }
    writer.finish();
    EXPECT_EQ(frames, 10);
    EXPECT_EQ(decoded_frames(out), 10) << codec;
    if (codec == "libx264") {
      EXPECT_NE(writer.description().find("tune zerolatency"), std::string::npos) << writer.description();
      EXPECT_EQ(probe_stream(out, "v:0", "has_b_frames"), "0\n");
    }
  }
  // Raw RGBA to a pipe-like file: exactly the pictures' bytes, in order.
  const std::string raw = dir.file("out.rgba");
  OutputOptions o = output(raw);
  o.format = "rawvideo";
  o.pixel_format = "rgba";
  o.low_latency = true;
  transcode(input(clip), o);
  EXPECT_EQ(run("md5sum < " + quote(raw)).output.substr(0, 32),
            run("ffmpeg -v error -i " + quote(clip) + " -f rawvideo -pix_fmt rgba - | md5sum", true).output.substr(0, 32));
}

TEST(MediaWriter, FinishAfterAnInterruptedReadLeavesAPlayableFile) {
  TempDir dir;
  const std::string clip = make_clip(dir, "in.mkv", "96x64", 25, "-c:v libx264 -pix_fmt yuv420p -f matroska");
  for (const std::string ext : {"mp4", "mkv", "mov"}) {
    const std::string out = dir.file("part." + ext);
    MediaReader reader(input(clip));
    Converter converter;
    MediaItem item;
    {
      MediaWriter writer(output(out, "libx264"), reader.video(), reader.video().size, reader);
      for (int i = 0; i < 7 && reader.next(item);) {
        if (item.kind != MediaItem::Kind::video) continue;
        writer.write_video(converter.convert(item.frame, writer.encoder_format(), writer.output_size(),
                                             writer.encoder_color()),
                           item.frame.pts, item.frame.duration);
        ++i;
      }
      writer.finish();
      writer.finish();  // idempotent
      EXPECT_EQ(writer.frames_written(), 7);
      try {
        writer.write_video(converter.convert(item.frame, writer.encoder_format(), writer.output_size(),
                                             writer.encoder_color()),
                           item.frame.pts + 1000, 1);
        ADD_FAILURE() << "a picture after finish() was taken";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::internal);
      }
    }
    EXPECT_EQ(decoded_frames(out), 7) << ext;
  }
  // Without finish(): the destructor finalizes.
  const std::string out = dir.file("dropped.mkv");
  {
    MediaReader reader(input(clip));
    MediaWriter writer(output(out, "ffv1"), reader.video(), reader.video().size, reader);
    Converter converter;
    MediaItem item;
    for (int i = 0; i < 3 && reader.next(item); ++i)
      writer.write_video(converter.convert(item.frame, writer.encoder_format(), writer.output_size(),
                                           writer.encoder_color()),
                         item.frame.pts, item.frame.duration);
  }
  EXPECT_EQ(decoded_frames(out), 3);
}

// The cut lands anywhere: in a video packet, in an audio packet, between them.
TEST(MediaWriter, TruncatedInputStillGivesAPlayableOutput) {
  TempDir dir;
  const std::string full = dir.file("full.ts"), cut = dir.file("cut.ts");
  ffmpeg(picture_source("160x120", 25, "cut-out") + " " + tone_source("cut-out") +
         " -t 2 -c:v libx264 -pix_fmt yuv420p -c:a aac " + full);
  std::filesystem::copy_file(full, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(full) / 2 + 51);
  for (const std::string ext : {"mkv", "mp4"}) {
    const std::string out = dir.file("out." + ext);
    const TranscodeResult r = transcode(input(cut), output(out, "libx264"));
    ASSERT_TRUE(r.data_error) << ext;
    EXPECT_NE(r.data_error->find(cut), std::string::npos);
    EXPECT_GT(r.pts.size(), 10u);
    EXPECT_LT(r.pts.size(), 50u);
    EXPECT_EQ(decoded_frames(out), int(r.pts.size())) << ext << ": every frame read is in the output";
  }
}

// Where the cut falls, the end of a transport stream can give AAC a fragment
// shorter than its ADTS header (3 bytes, say), not flagged corrupt, which the
// Matroska and MP4 muxers' aac_adtstoasc refuses: the writer drops that packet
// with a warning, and the rest of the output is written. Here one audio packet
// of a whole file is cut to 3 bytes.
TEST(MediaWriter, ACopiedPacketTheMuxerRefusesIsDroppedNotTheOutput) {
  TempDir dir;
  const std::string ts = dir.file("in.ts");
  ffmpeg(picture_source("96x64", 25, "refused") + " " + tone_source("refused") +
         " -t 1 -c:v libx264 -pix_fmt yuv420p -c:a aac " + ts);
  constexpr size_t kCut = 5;
  for (const std::string ext : {"mkv", "mp4"}) {
    // What FFmpeg's own stream copy makes of the uncut audio (its ADTS headers
    // become the container's setup), less the cut packet.
    const std::string out = dir.file("out." + ext), reference = dir.file("reference." + ext);
    ffmpeg("-i " + quote(ts) + " -map 0:a -c copy " + quote(reference));
    std::vector<std::string> audio = packet_payloads(reference, AVMEDIA_TYPE_AUDIO);
    ASSERT_GT(audio.size(), 10u) << ext;
    audio.erase(audio.begin() + kCut);
    MediaReader reader(input(ts));
    std::unique_ptr<MediaWriter> writer;
    std::vector<MediaItem> early_packets;
    Converter converter;
    MediaItem item;
    size_t audio_packets = 0;
    int frames = 0;
    testing::internal::CaptureStderr();
    while (reader.next(item)) {
      if (item.kind == MediaItem::Kind::packet) {
        if (audio_packets++ == kCut) av_shrink_packet(item.packet, 3);
        if (writer) ASSERT_NO_THROW(writer->write_packet(item.packet)) << ext;
        else early_packets.push_back(std::move(item));
        continue;
      }
      if (!writer) {
        writer = std::make_unique<MediaWriter>(output(out, "libx264"), reader.video(), item.frame.size(), reader);
        for (auto& p : early_packets) ASSERT_NO_THROW(writer->write_packet(p.packet)) << ext;
        early_packets.clear();
      }
      writer->write_video(converter.convert(item.frame, writer->encoder_format(), writer->output_size(),
                                            writer->encoder_color()),
                          item.frame.pts, item.frame.duration);
      ++frames;
    }
    ASSERT_TRUE(writer) << ext;
    ASSERT_NO_THROW(writer->finish()) << ext;
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("dropped a packet of stream #1 that the muxer refuses"), std::string::npos) << ext << ": " << log;
    EXPECT_FALSE(reader.data_error()) << ext;
    EXPECT_EQ(decoded_frames(out), frames) << ext;
    EXPECT_TRUE(packet_payloads(out, AVMEDIA_TYPE_AUDIO) == audio) << ext << ": all audio but the cut packet";
  }
}

TEST(MediaWriter, OddSizesAreCroppedWhereTheCodecNeedsEvenOnes) {
  TempDir dir;
  const std::string clip = make_clip(dir, "in.mkv", "98x66", 5, "-vf format=yuv444p,crop=97:65:0:0 -c:v ffv1 -pix_fmt yuv444p");
  const TranscodeResult x264 = transcode(input(clip), output(dir.file("odd.mp4"), "libx264"));
  EXPECT_EQ(decoded_frames(dir.file("odd.mp4")), 5);
  EXPECT_EQ(probe_stream(dir.file("odd.mp4"), "v:0", "width,height"), "96\n64\n");
  ASSERT_EQ(x264.warnings.size(), 1u);
  EXPECT_NE(x264.warnings[0].find("97x65 is cropped to 96x64"), std::string::npos) << x264.warnings[0];
  // Codecs without that constraint keep every pixel.
  transcode(input(clip), output(dir.file("odd.nut"), "rawvideo"));
  EXPECT_EQ(probe_stream(dir.file("odd.nut"), "v:0", "width,height"), "97\n65\n");
  EXPECT_EQ(frame_md5s(dir.file("odd.nut"), "yuv444p"), frame_md5s(clip, "yuv444p"));
}

TEST(MediaWriter, SingleImageOutputKeepsTheFirstPicture) {
  TempDir dir;
  const std::string video = make_clip(dir, "in.nut", "120x90", 6, "-c:v png -pix_fmt rgb24");
  const std::string png = dir.file("sketch.png");
  const TranscodeResult r = transcode(input(video), output(png));
  EXPECT_EQ(r.pts.size(), 6u);
  EXPECT_EQ(decoded_frames(png), 1);
  EXPECT_EQ(frame_md5s(png, "rgb24").at(0), frame_md5s(video, "rgb24").at(0)) << "the first picture, losslessly";
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("single image"), std::string::npos);

  // A photo in, a photo out.
  const std::string photo = dir.file("photo.jpg"), out = dir.file("photo_out.png");
  ffmpeg(picture_source("200x150", 25, "photo") + " -frames:v 1 " + photo);
  const TranscodeResult one = transcode(input(photo), output(out));
  EXPECT_EQ(one.pts.size(), 1u);
  EXPECT_TRUE(one.warnings.empty());
  EXPECT_EQ(probe_stream(out, "v:0", "width,height,pix_fmt"), "200\n150\nrgb24\n");
  // JPEG is full-range BT.601: the PNG must match ffmpeg's own conversion of
  // it (same chroma interpolation as the test's converter; a wrong range or
  // matrix costs 15-25 dB).
  const CommandOutput psnr =
      run("ffmpeg -nostdin -hide_banner -i " + quote(photo) + " -i " + quote(out) +
          " -lavfi \"[0]scale=flags=bicubic+accurate_rnd+full_chroma_int,format=rgb24[a];[1]format=rgb24[b];"
          "[a][b]psnr\" -f null - 2>&1 | grep -o 'average:[0-9.inf]*'");
  ASSERT_NE(psnr.output.find("average:"), std::string::npos) << psnr.output;
  const double db = psnr.output.find("inf") != std::string::npos ? 99 : std::atof(psnr.output.c_str() + 8);
  EXPECT_GT(db, 45) << psnr.output;
}

}  // namespace
}  // namespace sp::codec_test
