// scan_keyframes_for's sampled scan, forced on small MPEG-TS clips through
// SP_SAMPLED_SCAN_MIN_BYTES, against ffprobe's key packets and the plan the
// full scan gives; random GOPs, B-frames, open GOPs, start times (the 33-bit
// clock wrapping within the clip too) and requests each run.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "orchestration/keyframe_clips_test_util.h"
#include "orchestration/keyframes.h"
#include "pipeline/errors.h"

namespace sp::test {
// Fixture helpers of another test file may share names: each set has its own namespace.
using namespace keyframe_clips;
namespace {

constexpr const char* kThreshold = "SP_SAMPLED_SCAN_MIN_BYTES";

KeyframeScan scan_for(const std::string& file, const CutRequest& request) {
  return scan_keyframes_for(file, [&](const KeyframeScan&) { return request; });
}

KeyframeScan sampled_scan(const std::string& file, const CutRequest& request) {
  const ScopedEnv always(kThreshold, "0");
  return scan_for(file, request);
}

std::vector<SegmentPlan> plan(const KeyframeScan& scan, const CutRequest& r) {
  return choose_segments(scan, r.segments, r.segment_seconds, r.warmup_frames);
}

std::string describe(const CutRequest& r) {
  return r.segments > 0 ? fmt::format("{} segments, warm-up {}", r.segments, r.warmup_frames)
                        : fmt::format("segments of {} s, warm-up {}", r.segment_seconds, r.warmup_frames);
}

// ffprobe's view of a clip, and the plans the full scan gives.
struct Truth {
  std::vector<ProbedPacket> packets;
  std::vector<int64_t> keys;  // key packets' pts, in file order
  KeyframeScan full;
};

Truth probe(const std::string& file) {
  Truth t;
  t.packets = probe_video_packets(file);
  for (const ProbedPacket& p : t.packets)
    if (p.key) t.keys.push_back(p.pts);
  t.full = scan_keyframes(file);
  EXPECT_EQ(t.full.source, "packets") << file;
  return t;
}

// Where frames are not counted, warm-up is estimated by time at the frame
// rate, rounded down: the latest key packet at least `warmup` frames of time
// before `begin`, else the first.
int64_t expected_seek(const Truth& t, const KeyframeScan& scan, int64_t begin, int warmup) {
  const double tick = av_q2d(scan.time_base), rate = av_q2d(scan.frame_rate);
  int64_t seek = t.keys.front();
  for (const int64_t k : t.keys)
    if (k <= begin && std::floor(double(begin - k) * tick * rate + 1e-6) >= warmup) seek = k;
  return seek;
}

void expect_sampled_plan_right(const std::string& file, const Truth& t, const CutRequest& request) {
  SCOPED_TRACE(file + ": " + describe(request));
  const KeyframeScan sampled = sampled_scan(file, request);
  ASSERT_EQ(sampled.source, "sampled");
  EXPECT_EQ(sampled.start_seconds, t.full.start_seconds);
  EXPECT_EQ(sampled.duration_seconds, t.full.duration_seconds);
  EXPECT_EQ(av_cmp_q(sampled.frame_rate, t.full.frame_rate), 0);
  ASSERT_FALSE(sampled.keyframes.empty());
  EXPECT_EQ(sampled.keyframes.front().pts, t.keys.front()) << "decoding starts at the file's first keyframe";
  const std::set<int64_t> keys(t.keys.begin(), t.keys.end());
  for (const Keyframe& k : sampled.keyframes) {
    EXPECT_TRUE(keys.count(k.pts)) << "pts " << k.pts << " is not a key packet";
    EXPECT_EQ(k.frames_before, -1);
  }

  const std::vector<SegmentPlan> got = plan(sampled, request), full = plan(t.full, request);
  ASSERT_EQ(got.size(), full.size());
  std::vector<int> owners(t.packets.size(), 0);
  for (size_t i = 0; i < got.size(); ++i) {
    const SegmentPlan& p = got[i];
    EXPECT_EQ(p.begin_pts, full[i].begin_pts) << "segment " << i;
    EXPECT_EQ(p.end_pts, full[i].end_pts) << "segment " << i;
    EXPECT_EQ(p.begin_seconds, full[i].begin_seconds) << "segment " << i;
    const int64_t begin = p.begin_pts.value_or(INT64_MIN), end = p.end_pts.value_or(INT64_MAX);
    int frames = 0;
    for (size_t f = 0; f < t.packets.size(); ++f)
      if (!t.packets[f].discard && t.packets[f].pts >= begin && t.packets[f].pts < end) ++owners[f], ++frames;
    EXPECT_GT(frames, 0) << "segment " << i;
    if (i == 0) continue;
    ASSERT_TRUE(p.seek_pts && keys.count(*p.seek_pts)) << "segment " << i << " seeks off a key packet";
    EXPECT_EQ(*p.seek_pts, expected_seek(t, sampled, begin, request.warmup_frames)) << "segment " << i;
    if (request.warmup_frames == 0) {
      EXPECT_EQ(p.seek_pts, full[i].seek_pts) << "segment " << i;
    }
  }
  for (size_t f = 0; f < owners.size(); ++f)
    EXPECT_EQ(owners[f], 1) << "frame " << f << " (pts " << t.packets[f].pts << ") belongs to one segment";
}

ClipSpec fixed_spec(double seconds, int gop, int bframes) {
  ClipSpec spec;
  spec.seconds = seconds;
  spec.gop = gop;
  spec.bframes = bframes;
  return spec;
}

CutRequest random_request(std::mt19937_64& rng) {
  CutRequest r;
  if (rng() % 2)
    r.segments = 1 + int(rng() % 40);  // at times more than the keyframes
  else
    r.segment_seconds = 0.2 + double(rng() % 60) / 10;
  r.warmup_frames = rng() % 3 ? int(rng() % 90) : 0;
  return r;
}

TEST(SampledScan, RandomTransportStreamsPlanAsTheFullScan) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  const int rates[] = {24, 25, 30, 50};
  for (int round = 0; round < 4; ++round) {
    ClipSpec spec;
    spec.seconds = 10 + double(rng() % 300) / 10;
    spec.rate = rates[rng() % std::size(rates)];
    spec.gop = 2 + int(rng() % 70);
    spec.bframes = int(rng() % 4);
    spec.open_gop = rng() % 2;
    spec.audio = rng() % 2;
    // MPEG-TS starts at 1.4 s; later, or so close to 2^33 / 90 kHz (95443.7
    // s) that the clock wraps within the clip.
    const double offset = rng() % 2 ? double(rng() % 100000) / 100 : 95443.7 - 1.4 - double(rng() % 500) / 100;
    spec.extra = fmt::format("-output_ts_offset {:.2f}", offset);
    SCOPED_TRACE(fmt::format("{} s at {} fps, GOP {}, {} B-frames, open GOP {}, audio {}, offset {:.2f}", spec.seconds,
                             spec.rate, spec.gop, spec.bframes, spec.open_gop, spec.audio, offset));
    const std::string file = make_clip(dir, fmt::format("clip{}.ts", round), spec);
    const Truth truth = probe(file);
    for (int request = 0; request < 3; ++request) expect_sampled_plan_right(file, truth, random_request(rng));
  }
}

TEST(SampledScan, OneKeyframeAndAClipShorterThanASegment) {
  TempDir dir;
  const std::string file = make_clip(dir, "one.ts", fixed_spec(3, 1000, 2));
  const Truth truth = probe(file);
  ASSERT_EQ(truth.keys.size(), 1u);
  for (const CutRequest request : {CutRequest{4, 0, 0}, CutRequest{0, 60, 10}, CutRequest{0, 0.5, 0}}) {
    expect_sampled_plan_right(file, truth, request);
    EXPECT_EQ(plan(sampled_scan(file, request), request).size(), 1u) << describe(request);
  }
}

// Two transport streams joined: the second restarts the clock. Sampling
// cannot trust its seeks there; the full scan refuses the file, as always.
TEST(SampledScan, ClockThatRestartsIsReadThroughAndRefused) {
  TempDir dir;
  const ClipSpec spec = fixed_spec(8, 12, 0);
  const std::string a = make_clip(dir, "a.ts", spec), b = make_clip(dir, "b.ts", spec);
  const std::string joined = dir.file("joined.ts");
  ASSERT_EQ(run_command("cat " + shell_quote(a) + " " + shell_quote(b) + " > " + shell_quote(joined)).exit_code, 0);
  for (const CutRequest request : {CutRequest{4, 0, 0}, CutRequest{0, 1.5, 20}}) {
    try {
      sampled_scan(joined, request);
      ADD_FAILURE() << describe(request) << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::data_error) << e.what();
      EXPECT_NE(std::string(e.what()).find(joined), std::string::npos) << e.what();
    }
  }
}

// Below the threshold, and where the demuxer has an index, nothing changes.
TEST(SampledScan, SmallFilesAndIndexedFilesAreNotSampled) {
  TempDir dir;
  const std::string ts = make_clip(dir, "in.ts", fixed_spec(4, 25, 2));
  const CutRequest request{3, 0, 5};
  {
    const ScopedEnv threshold(kThreshold, std::to_string(std::filesystem::file_size(ts) + 1));
    EXPECT_EQ(scan_for(ts, request).source, "packets");
  }
  EXPECT_EQ(sampled_scan(remux(dir, ts, "in.mp4"), request).source, "index");
  EXPECT_EQ(sampled_scan(remux(dir, ts, "in.mkv"), request).source, "index");
  const ScopedEnv bad(kThreshold, "64M");
  try {
    scan_for(ts, request);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find(kThreshold), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sp::test
