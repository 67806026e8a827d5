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

// The video packets shown last, by ffprobe, in presentation order. Not those
// flagged D (discard): an edit list leaves them out of the presentation (FFmpeg
// 7 ends a clip made with -t at its end, which the last frame can outlast).
std::vector<VideoPacket> last_shown_video_packets(const std::string& file, size_t count) {
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
  packets.erase(packets.begin(), packets.end() - std::ptrdiff_t(std::min(count, packets.size())));
  return packets;
}

TEST(MediaReader, WithoutVideoDecodingGivesTheCopiedPacketsAndTheLastFramesTimes) {
  TempDir dir;
  const std::string clip = dir.file("vfr.mp4");
  const int step_ms = 20 + int(seed_for("copy-only step") % 60);
  ffmpeg(picture_source("128x96", 25, "copy-only") + " " + tone_source("copy-only") +
         " -t 2 -vf \"setpts='(0.3+N*" + std::to_string(step_ms) + "/1000+if(gt(N,20),0.05,0))/TB'\" -fps_mode vfr"
         " -c:v libx264 -bf 2 -pix_fmt yuv420p -c:a aac " + clip);

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

  const size_t kept = MediaReader::kLastVideoFramesKept;
  const std::vector<VideoPacket> expected = last_shown_video_packets(clip, kept);
  const std::vector<FrameTime>& last = copy_only.last_video_frames();
  ASSERT_EQ(last.size(), kept) << "the clip has more frames";
  ASSERT_EQ(expected.size(), kept);
  for (size_t i = 0; i < kept; ++i) {
    EXPECT_EQ(last[i].pts, expected[i].pts) << i;
    EXPECT_EQ(last[i].duration, expected[i].duration) << i;
  }
  ASSERT_TRUE(copy_only.last_video_frame());
  EXPECT_EQ(copy_only.last_video_frame()->pts, expected.back().pts);

  // As the decoding reader gives the last pictures.
  std::vector<FrameTime> decoded;
  while (decoding.next(item))
    if (item.kind == MediaItem::Kind::video) decoded.push_back({item.frame.pts, item.frame.duration});
  ASSERT_GE(decoded.size(), kept);
  for (size_t i = 0; i < kept; ++i) {
    const FrameTime& d = decoded[decoded.size() - kept + i];
    EXPECT_EQ(last[i].pts, d.pts) << i;
    EXPECT_EQ(last[i].duration, d.duration) << i;
  }
}

}  // namespace
}  // namespace sp::codec_test
