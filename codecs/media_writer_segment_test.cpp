// MediaWriter's NUT segments for a `--jobs` run whose output keeps B-frames:
// the encoder's B-frames stay, every timestamp moved later by exactly the
// tagged offset, checked with ffprobe against the input's frame times.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "codecs/codec_test_util.h"
#include "codecs/video_parameters_tag.h"

namespace sp::codec_test {
namespace {

struct ProbedNut {
  int has_b_frames = -1;
  AVRational time_base{0, 1};
  std::string offset_tag;
  std::vector<int64_t> pts;  // increasing
};

std::string value_after(const std::string& text, const std::string& key) {
  const size_t at = text.find(key + "=");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 1;
  return text.substr(begin, text.find('\n', begin) - begin);
}

AVRational parse_fraction(const std::string& text) {
  AVRational q{0, 1};
  char slash = 0;
  std::istringstream(text) >> q.num >> slash >> q.den;
  return q;
}

ProbedNut probe(const std::string& file) {
  ProbedNut p;
  const std::string stream = run("ffprobe -v error -select_streams v:0 -show_entries stream=has_b_frames,time_base:"
                                 "stream_tags -of default=nw=1 " + quote(file), true).output;
  p.has_b_frames = std::atoi(value_after(stream, "has_b_frames").c_str());
  p.time_base = parse_fraction(value_after(stream, "time_base"));
  p.offset_tag = value_after(stream, std::string("TAG:") + kTimestampOffsetTag);
  const CommandOutput packets = run("ffprobe -v error -select_streams v:0 -show_entries packet=pts -of csv=p=0 " +
                                    quote(file), true);
  for (const std::string& line : test::nonempty_lines(packets.output)) p.pts.push_back(std::stoll(line));
  std::sort(p.pts.begin(), p.pts.end());
  return p;
}

// `pts` of `from` in ticks of `to`, which must be finer by a whole factor.
int64_t exactly_in(int64_t pts, AVRational from, AVRational to) {
  const int64_t num = pts * from.num * to.den, den = int64_t(from.den) * to.num;
  EXPECT_EQ(num % den, 0) << pts << " in " << from.num << "/" << from.den << " is no tick of " << to.num << "/" << to.den;
  return num / den;
}

TEST(MediaWriter, NutSegmentKeepsBFramesMovedLaterByTheTaggedReorderDelay) {
  std::mt19937_64 rng(seed_for("nut segment b-frames"));
  TempDir dir;
  const std::string clip = dir.file(rng() % 2 ? "in.mp4" : "in.mkv");
  // Irregular steps; half the time a start at 0, where the encoder's first
  // decode times are negative.
  const double step = 0.02 + double(rng() % 30) / 1000, start = rng() % 2 ? 0 : double(rng() % 2000) / 1000;
  char filter[160];
  std::snprintf(filter, sizeof(filter), "settb=1/90000,setpts='(%.3f+N*%.3f+%.4f*pow(sin(N*3),2))/TB'", start, step,
                step * double(rng() % 80) / 100);
  ffmpeg(picture_source("128x96", 25, "nut segment b-frames") + " -frames:v " + std::to_string(30 + rng() % 40) +
         " -vf \"" + filter + "\" -fps_mode vfr -enc_time_base 1/90000 -c:v libx264 -bf 0 -pix_fmt yuv420p " + clip);
  const ProbedNut source = probe(clip);
  SCOPED_TRACE(testing::Message() << clip << ": " << filter);
  ASSERT_EQ(source.has_b_frames, 0);

  OutputOptions o;
  o.codec = "libx264";
  o.preset = "medium";
  for (const bool keeps_b_frames : {true, false}) {
    o.url = dir.file(keeps_b_frames ? "with.nut" : "without.nut");
    o.segment_keeps_b_frames = keeps_b_frames;
    transcode(input(clip), o);
    const ProbedNut segment = probe(o.url);
    ASSERT_EQ(segment.pts.size(), source.pts.size());
    EXPECT_EQ(decoded_frames(o.url), int(source.pts.size()));
    int64_t offset = 0;
    if (keeps_b_frames) {
      ASSERT_GT(segment.has_b_frames, 0) << "preset medium has B-frames";
      // The reorder delay in ticks of the encoder's clock: the input's.
      AVRational expected{0, 1};
      av_reduce(&expected.num, &expected.den, int64_t(segment.has_b_frames) * source.time_base.num, source.time_base.den,
                INT32_MAX);
      EXPECT_EQ(segment.offset_tag, std::to_string(expected.num) + "/" + std::to_string(expected.den));
      offset = exactly_in(segment.has_b_frames, source.time_base, segment.time_base);
    } else {
      EXPECT_EQ(segment.has_b_frames, 0);
      EXPECT_EQ(segment.offset_tag, "");
    }
    for (size_t i = 0; i < source.pts.size(); ++i)
      ASSERT_EQ(segment.pts[i] - offset, exactly_in(source.pts[i], source.time_base, segment.time_base)) << "frame " << i;
  }
}

}  // namespace
}  // namespace sp::codec_test
