// A decoder kept from one input for the next: every picture of the next
// input must be what ffmpeg decodes from that file alone.
#include "codecs/kept_decoder.h"

#include "codecs/codec_test_util.h"

namespace sp::codec_test {
namespace {

struct Decoded {
  std::vector<std::string> md5;
  std::vector<int64_t> pts;
  bool kept = false;
};

// Reads `clip` through `kept`, the whole of it or its first `frames`
// pictures, then closes the decoder as the transcoder does.
Decoded decode(const std::string& clip, KeptDecoder& kept, int frames = -1) {
  InputOptions options = input(clip);
  options.kept_decoder = &kept;
  MediaReader reader(options);
  Decoded d;
  d.kept = reader.decoder_was_kept();
  MediaItem item;
  while ((frames < 0 || int(d.md5.size()) < frames) && reader.next(item)) {
    if (item.kind != MediaItem::Kind::video) continue;
    EXPECT_EQ(item.frame.view().format, PixelFormat::yuv420p);
    d.md5.push_back(picture_md5(item.frame.view()));
    d.pts.push_back(item.frame.pts);
  }
  reader.close_decoder();
  return d;
}

std::vector<int64_t> ffprobe_pts(const std::string& clip) {
  std::vector<int64_t> pts;
  const std::string out = run("ffprobe -v error -select_streams v:0 -show_entries frame=best_effort_timestamp "
                              "-of csv=p=0 " + quote(clip), true).output;
  for (const std::string& line : test::nonempty_lines(out)) pts.push_back(std::stoll(line));
  return pts;
}

void expect_as_ffmpeg_decodes(const Decoded& d, const std::string& clip) {
  EXPECT_EQ(d.md5, frame_md5s(clip, "yuv420p")) << clip;
  EXPECT_EQ(d.pts, ffprobe_pts(clip)) << clip;
}

// Clips of one kind (an encoder's settings and size: the same parameter
// sets), each a different picture, with B-frames so that pictures wait in
// the decoder for reordering; and one of another size.
TEST(KeptDecoder, TheNextInputOfTheSameKindDecodesAsFfmpegDecodesItAlone) {
  TempDir dir;
  std::vector<std::string> clips;
  for (const char* name : {"a", "b", "c"}) {
    clips.push_back(dir.file(std::string(name) + ".mp4"));
    ffmpeg(picture_source("192x108", 25, std::string("kept ") + name) +
           " -frames:v 23 -c:v libx264 -preset veryfast -bf 3 -pix_fmt yuv420p " + clips.back());
  }
  const std::string other_size = dir.file("other.mp4");
  ffmpeg(picture_source("160x120", 25, "kept other") + " -frames:v 17 -c:v libx264 -bf 3 -pix_fmt yuv420p " + other_size);

  KeptDecoder kept;
  const Decoded first = decode(clips[0], kept);
  EXPECT_FALSE(first.kept) << "nothing was kept yet";
  expect_as_ffmpeg_decodes(first, clips[0]);
  for (size_t k = 1; k < clips.size(); ++k) {
    const Decoded next = decode(clips[k], kept);
    EXPECT_TRUE(next.kept) << clips[k] << ": the previous clip's decoder was not taken";
    expect_as_ffmpeg_decodes(next, clips[k]);
  }
  EXPECT_EQ(kept.reuses(), 2);

  const Decoded other = decode(other_size, kept);
  EXPECT_FALSE(other.kept) << "a decoder of another size was taken";
  expect_as_ffmpeg_decodes(other, other_size);
  // The 192x108 decoder made way for the 160x120 one.
  EXPECT_FALSE(decode(clips[0], kept).kept);

  // A reader stopped early gives nothing back: pictures could still be inside.
  const Decoded stopped = decode(clips[1], kept, 5);
  EXPECT_TRUE(stopped.kept);
  ASSERT_EQ(stopped.md5.size(), 5u);
  const Decoded after_stop = decode(clips[2], kept);
  EXPECT_FALSE(after_stop.kept) << "a decoder closed before its input's end was kept";
  expect_as_ffmpeg_decodes(after_stop, clips[2]);
}

}  // namespace
}  // namespace sp::codec_test
