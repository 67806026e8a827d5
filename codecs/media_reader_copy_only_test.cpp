// MediaReader without video decoding (what the concat of a plan reads its
// input's audio and subtitles with), against ffprobe/libavformat and against
// the decoding reader.
#include <algorithm>
#include <sstream>

#include "codecs/codec_test_util.h"

namespace sp::codec_test {
namespace {

struct VideoPacket {
  int64_t pts = 0, duration = 0;
};

// The video packets shown, by ffprobe, in presentation order. Not those
// flagged D (discard): an edit list leaves them out of the presentation (FFmpeg
// 7 ends a clip made with -t at its end, which the last frame can outlast).
std::vector<VideoPacket> shown_video_packets(const std::string& file) {
  const CommandOutput r = run("ffprobe -v error -select_streams v:0 -show_entries packet=pts,duration,flags "
                              "-of csv=p=0 " + quote(file), true);
  std::vector<VideoPacket> packets;
  for (const std::string& line : test::nonempty_lines(r.output)) {
    VideoPacket p;
    char comma = 0;
    std::string flags;
    std::istringstream(line) >> p.pts >> comma >> p.duration >> comma >> flags;
    if (flags.find('D') == std::string::npos) packets.push_back(p);
  }
  std::sort(packets.begin(), packets.end(), [](const VideoPacket& a, const VideoPacket& b) { return a.pts < b.pts; });
  return packets;
}

std::string make_vfr_clip_with_b_frames(const TempDir& dir) {
  const std::string clip = dir.file("vfr.mp4");
  const int step_ms = 20 + int(seed_for("copy-only step") % 60);
  ffmpeg(picture_source("128x96", 25, "copy-only") + " " + tone_source("copy-only") +
         " -t 2 -vf \"setpts='(0.3+N*" + std::to_string(step_ms) + "/1000+if(gt(N,20),0.05,0))/TB'\" -fps_mode vfr"
         " -c:v libx264 -bf 2 -pix_fmt yuv420p -c:a aac " + clip);
  return clip;
}

TEST(MediaReader, WithoutVideoDecodingGivesTheCopiedPacketsAndEveryFramesTimes) {
  TempDir dir;
  const std::string clip = make_vfr_clip_with_b_frames(dir);
  InputOptions options = input(clip);
  options.decode_video = false;
  MediaReader copy_only(options);
  MediaReader decoding(input(clip));
  EXPECT_EQ(av_cmp_q(copy_only.video().time_base, decoding.video().time_base), 0);
  EXPECT_EQ(av_cmp_q(copy_only.video().frame_rate, decoding.video().frame_rate), 0);
  EXPECT_EQ(copy_only.copy_streams().size(), decoding.copy_streams().size());
  EXPECT_FALSE(copy_only.last_video_frame()) << "nothing read yet";

  std::vector<std::string> packets;
  MediaItem item;
  while (copy_only.next(item)) {
    ASSERT_EQ(item.kind, MediaItem::Kind::packet) << "no pictures without decoding";
    packets.emplace_back(reinterpret_cast<const char*>(item.packet->data), size_t(item.packet->size));
  }
  EXPECT_FALSE(copy_only.data_error());
  const std::vector<std::string> audio = packet_payloads(clip, AVMEDIA_TYPE_AUDIO);
  ASSERT_GT(audio.size(), 10u);
  EXPECT_EQ(packets, audio);

  const std::vector<VideoPacket> expected = shown_video_packets(clip);
  const std::deque<FrameTime>& read = copy_only.video_frames_read();
  ASSERT_EQ(read.size(), expected.size());
  ASSERT_GT(expected.size(), MediaReader::kMaxReorderedFrames) << "the clip has too few frames";
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(read[i].pts, expected[i].pts) << i;
    EXPECT_EQ(read[i].duration, expected[i].duration) << i;
  }
  ASSERT_TRUE(copy_only.last_video_frame());
  EXPECT_EQ(copy_only.last_video_frame()->pts, expected.back().pts);

  // As the decoding reader gives the pictures.
  std::vector<FrameTime> decoded;
  while (decoding.next(item))
    if (item.kind == MediaItem::Kind::video) decoded.push_back({item.frame.pts, item.frame.duration});
  ASSERT_EQ(decoded.size(), read.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].pts, decoded[i].pts) << i;
    EXPECT_EQ(read[i].duration, decoded[i].duration) << i;
  }
}

// What the concat relies on while it reads the input along with the joined
// video: a frame it says it has read through is there, until forgotten.
TEST(MediaReader, WithoutVideoDecodingSaysWhichFramesItHasReadThrough) {
  TempDir dir;
  const std::string clip = make_vfr_clip_with_b_frames(dir);
  const std::vector<VideoPacket> expected = shown_video_packets(clip);
  InputOptions options = input(clip);
  options.decode_video = false;
  MediaReader reader(options);
  auto has_frame = [&](int64_t pts) {
    return std::any_of(reader.video_frames_read().begin(), reader.video_frames_read().end(),
                       [&](const FrameTime& f) { return f.pts == pts; });
  };
  size_t next_to_check = 0, reads = 0, through_before_end = 0;
  MediaItem item;
  bool more = true;
  while (next_to_check < expected.size()) {
    if (!reader.video_read_through(expected[next_to_check].pts)) {
      ASSERT_TRUE(more) << "the input ended without being read through " << expected[next_to_check].pts;
      more = reader.next(item);
      ++reads;
      continue;
    }
    if (more) ++through_before_end;
    const int64_t pts = expected[next_to_check].pts;
    ASSERT_TRUE(has_frame(pts)) << "read through " << pts << " without its frame";
    for (const FrameTime& f : reader.video_frames_read()) {
      if (f.pts == pts) {
        EXPECT_EQ(f.duration, expected[next_to_check].duration);
      }
    }
    reader.forget_video_frames_before(pts);
    EXPECT_TRUE(has_frame(pts)) << "forgot the frame at the point itself";
    ASSERT_FALSE(reader.video_frames_read().empty());
    EXPECT_EQ(reader.video_frames_read().front().pts, pts);
    ++next_to_check;
  }
  EXPECT_GT(through_before_end, expected.size() / 2) << "it should know most frames long before the input's end";
  EXPECT_GT(reads, 10u);
}

}  // namespace
}  // namespace sp::codec_test
