#pragma once
// Segment plans made by hand for the concat tests (header-only: a non-test
// .cpp here would land in the orchestration library): a manifest cut at the
// keyframes ffprobe finds, segments written as the worker writes them, and
// the single run they are compared with. Results are checked with
// ffprobe/ffmpeg, never with the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "orchestration/manifest.h"
#include "orchestration/segment_file.h"
#include "orchestration/transcode.h"
#include "pipeline/stage.h"
#include "pipeline/stage_chain.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test::concat_fixtures {

struct VideoPackets {
  int stream_index = -1;
  AVRational time_base{1, 1};
  std::vector<int64_t> keyframe_pts;  // increasing
  std::vector<int64_t> pts;           // of every frame, increasing
};

// The first video stream's frames and keyframes, by ffprobe.
inline VideoPackets probe_video_packets(const std::string& file) {
  VideoPackets v;
  const CommandResult stream = run_command("ffprobe -v error -select_streams v:0 -show_entries stream=index,time_base "
                                           "-of csv=p=0 " + shell_quote(file));
  EXPECT_EQ(stream.exit_code, 0) << stream.output;
  char slash = 0;
  std::istringstream(stream.output) >> v.stream_index >> slash >> v.time_base.num >> slash >> v.time_base.den;
  const CommandResult packets = run_command("ffprobe -v error -select_streams v:0 -show_entries packet=pts,flags "
                                            "-of csv=p=0 " + shell_quote(file));
  EXPECT_EQ(packets.exit_code, 0) << packets.output;
  for (const std::string& line : nonempty_lines(packets.output)) {
    // "pts,flags": K a keyframe, D a packet the demuxer drops (FFmpeg 7's mov
    // marks a sample past the edit list so: no frame, and no place to cut).
    const std::string flags = line.substr(line.find(',') + 1);
    if (flags.find('D') != std::string::npos) continue;
    v.pts.push_back(std::stoll(line));
    if (flags.find('K') != std::string::npos) v.keyframe_pts.push_back(v.pts.back());
  }
  std::sort(v.keyframe_pts.begin(), v.keyframe_pts.end());
  std::sort(v.pts.begin(), v.pts.end());
  return v;
}

struct ClipSettings {
  int width = 0, height = 0;
  std::string rate;  // ffmpeg's rate syntax
  double seconds = 0;
  int gop = 0;  // frames between keyframes
  std::string container;
  std::string video_filter;     // appended to the filter chain, may be empty
  std::string extra;            // more output options
};

inline ClipSettings random_clip(std::mt19937_64& rng) {
  const char* rates[] = {"24", "25", "30", "30000/1001", "50"};
  const char* containers[] = {"mkv", "mp4", "mov", "nut"};
  ClipSettings c;
  c.width = 96 + 16 * int(rng() % 9);
  c.height = 64 + 16 * int(rng() % 7);
  c.rate = rates[rng() % std::size(rates)];
  c.seconds = 2.5 + double(rng() % 20) / 10;
  c.gop = 6 + int(rng() % 14);
  c.container = containers[rng() % std::size(containers)];
  return c;
}

// A few subtitle cues at random times within `seconds`, as SubRip.
inline std::string write_subtitles(const TempDir& dir, double seconds, std::mt19937_64& rng) {
  const std::string path = dir.file("cues.srt");
  std::ofstream out(path);
  auto time = [](int ms) {
    char text[32];
    std::snprintf(text, sizeof(text), "00:00:%02d,%03d", ms / 1000, ms % 1000);
    return std::string(text);
  };
  int at = int(rng() % 500);
  for (int cue = 1; at < int(seconds * 1000) - 300; ++cue) {
    const int length = 200 + int(rng() % 800);
    out << cue << "\n" << time(at) << " --> " << time(at + length) << "\ncue " << rng() % 1000 << "\n\n";
    at += length + int(rng() % 900);
  }
  return path;
}

// testsrc2 (never flat) at a random offset, a random tone, subtitle cues,
// keyframes every `gop` frames, B-frames on.
inline std::string make_clip(const TempDir& dir, const ClipSettings& c, std::mt19937_64& rng) {
  const std::string path = dir.file("input." + c.container);
  const int frequency = 200 + int(rng() % 1500);
  const int offset_frames = int(rng() % 500);
  std::string filter = "trim=start_frame=" + std::to_string(offset_frames) + ",setpts=PTS-STARTPTS";
  if (!c.video_filter.empty()) filter += "," + c.video_filter;
  const std::string subtitle_codec = c.container == "mkv" ? "srt" : c.container == "nut" ? "ass" : "mov_text";
  const CommandResult r = ffmpeg(
      "-f lavfi -i testsrc2=size=" + std::to_string(c.width) + "x" + std::to_string(c.height) + ":rate=" + c.rate +
      " -f lavfi -i sine=frequency=" + std::to_string(frequency) + ":sample_rate=48000 -i " +
      shell_quote(write_subtitles(dir, c.seconds, rng)) + " -map 0:v -map 1:a -map 2:s -vf \"" + filter + "\" -t " +
      std::to_string(c.seconds) + " -c:v libx264 -preset ultrafast -bf 2 -g " + std::to_string(c.gop) +
      " -keyint_min " + std::to_string(c.gop) + " -sc_threshold 0 -pix_fmt yuv420p -c:a aac -c:s " +
      subtitle_codec + " " + c.extra + " " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

// A random clip of 3-3.9 s with a keyframe every 4-8 frames, and two or
// three of its keyframes (never the first) as cuts: three or four segments.
struct ClipWithCuts {
  std::string input;
  VideoPackets packets;
  std::vector<int64_t> cuts;
};
inline ClipWithCuts short_clip_with_cuts(const TempDir& dir, std::mt19937_64& rng) {
  ClipSettings clip = random_clip(rng);
  clip.gop = 4 + int(rng() % 5);
  clip.seconds = 3 + double(rng() % 10) / 10;
  ClipWithCuts c;
  c.input = make_clip(dir, clip, rng);
  c.packets = probe_video_packets(c.input);
  c.cuts.assign(c.packets.keyframe_pts.begin() + 1, c.packets.keyframe_pts.end());
  EXPECT_GE(c.cuts.size(), 3u) << "the clip has too few keyframes";
  if (c.cuts.size() < 3) return c;
  std::shuffle(c.cuts.begin(), c.cuts.end(), rng);
  c.cuts.resize(2 + rng() % 2);
  std::sort(c.cuts.begin(), c.cuts.end());
  return c;
}

// 1 to 3 distinct keyframes after the first, increasing.
inline std::vector<int64_t> random_cuts(const std::vector<int64_t>& keyframes, std::mt19937_64& rng) {
  std::vector<int64_t> candidates(keyframes.begin() + 1, keyframes.end());
  std::shuffle(candidates.begin(), candidates.end(), rng);
  candidates.resize(std::min<size_t>(candidates.size(), 1 + rng() % 3));
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

// A manifest for `input` cut at `cuts` (keyframe pts, increasing): one
// segment before the first cut and one from each cut on.
inline Manifest make_manifest(const std::string& input, const std::vector<int64_t>& cuts, const ManifestOutput& output,
                              const std::string& workdir, const std::string& plan_id) {
  const VideoPackets video = probe_video_packets(input);
  Manifest m;
  m.plan_id = plan_id;
  m.workdir = workdir;
  m.input_path = input;
  m.input_fingerprint = fingerprint_file(input);
  m.video_stream = video.stream_index;
  m.time_base = video.time_base;
  m.keyframe_source = "packets";
  m.output = output;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    SegmentPlan s;
    s.index = int(i);
    if (i > 0) s.begin_pts = s.seek_pts = cuts[i - 1];
    if (i < cuts.size()) s.end_pts = cuts[i];
    s.begin_seconds = s.begin_pts ? *s.begin_pts * av_q2d(m.time_base) : 0;
    s.end_seconds = s.end_pts ? *s.end_pts * av_q2d(m.time_base) : -1;
    char name[64];
    std::snprintf(name, sizeof(name), "segment_%04zu.nut", i);
    s.file = name;
    m.segments.push_back(s);
  }
  return m;
}

inline TranscodeOptions transcode_options(const Manifest& m, const std::vector<StageSpec>& stages) {
  TranscodeOptions o;
  o.stages = stages;
  o.input.url = m.input_path;
  o.output.format = m.output.format;
  o.output.codec = m.output.codec;
  o.output.crf = m.output.crf;
  if (!m.output.preset.empty()) o.output.preset = m.output.preset;
  o.output.pixel_format = m.output.pixel_format;
  o.output.overwrite = true;
  o.backend = "cpu";
  o.progress = ProgressMode::none;
  return o;
}

// Writes segment `index` as a worker does, to its partial name, renamed to the
// final one unless `leave_partial`. `window_end` replaces the segment's end
// (an interrupted segment, or one that runs past its range).
inline void run_segment(const Manifest& m, int index, const std::vector<StageSpec>& stages, bool leave_partial = false,
                        std::optional<int64_t> window_end = std::nullopt) {
  const SegmentPlan& s = m.segments.at(size_t(index));
  TranscodeOptions o = transcode_options(m, stages);
  const int64_t end = window_end ? *window_end : s.end_pts.value_or(INT64_MAX);
  o.input.window = PtsWindow{s.seek_pts, s.begin_pts.value_or(INT64_MIN), end, false};
  o.output.url = m.partial_segment_path(index);
  o.output.format = kSegmentFormat;
  o.output.metadata_tags = {{kPlanIdTag, m.plan_id}, {kSegmentIndexTag, std::to_string(index)}};
  o.output.segment_keeps_b_frames = segments_keep_b_frames(m);
  RunStats stats;
  ASSERT_EQ(run_transcode(o, stats), 0) << "segment " << index;
  if (!leave_partial) std::filesystem::rename(m.partial_segment_path(index), m.segment_path(index));
}

inline void run_all_segments(const Manifest& m, const std::vector<StageSpec>& stages) {
  for (const SegmentPlan& s : m.segments) run_segment(m, s.index, stages);
}

// One single run of the same chain over the whole input.
inline void run_single(const Manifest& m, const std::vector<StageSpec>& stages, const std::string& output_path) {
  TranscodeOptions o = transcode_options(m, stages);
  o.output.url = output_path;
  RunStats stats;
  ASSERT_EQ(run_transcode(o, stats), 0);
}

// The scale stage to width x height, or no stage at all when both are 0.
inline std::vector<StageSpec> scale_chain(int width, int height) {
  if (width == 0 && height == 0) return {};
  const StageDescriptor* scale = StageRegistry::instance().find("scale");
  EXPECT_NE(scale, nullptr);
  if (!scale) return {};
  StageSpec spec{"scale", default_params(scale->params)};
  spec.params.set("width", int64_t(width));
  spec.params.set("height", int64_t(height));
  return {spec};
}

// ffprobe's description of the first video stream and of the container's tags:
// everything a single run and a concat must agree on.
inline std::string probe_video_description(const std::string& file) {
  const CommandResult r = run_command(
      "ffprobe -v error -select_streams v:0 -show_entries "
      "stream=index,codec_name,codec_tag_string,width,height,pix_fmt,sample_aspect_ratio,display_aspect_ratio,"
      "color_range,color_space,color_transfer,color_primaries,chroma_location,field_order,r_frame_rate,"
      "avg_frame_rate,time_base,start_pts,start_time,nb_frames:stream_disposition:stream_tags:format_tags "
      "-of default " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// Every stream of the file, without the video's own values: codec, disposition, tags.
inline std::string probe_streams(const std::string& file) {
  const CommandResult r = run_command("ffprobe -v error -show_entries stream=index,codec_type,codec_name,"
                                      "time_base:stream_disposition:stream_tags -of compact " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace sp::test::concat_fixtures
