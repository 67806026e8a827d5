// The live stats' per-frame timeline: steps from the recorded moments, the
// run's worst frames, and percentiles over the latest frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "pipeline/frame_timeline.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

using Clock = FrameTimes::Clock;
using std::chrono::microseconds;

// A frame whose steps take the given microseconds, starting at `start`.
FrameTimes frame_at(Clock::time_point start, int wait_us, int read_us, int queue_us, int process_us, int handoff_us,
                    int write_us) {
  FrameTimes t;
  t.arrived = start + microseconds(wait_us);
  t.read = t.arrived + microseconds(read_us);
  t.taken = t.read + microseconds(queue_us);
  t.processed = t.taken + microseconds(process_us);
  t.write_started = t.processed + microseconds(handoff_us);
  t.written = t.write_started + microseconds(write_us);
  return t;
}

TEST(FrameTimeline, RecordsNothingUntilReserved) {
  FrameTimeline timeline;
  timeline.record(0, frame_at(Clock::now(), 0, 100, 10, 200, 10, 300));
  EXPECT_FALSE(timeline.enabled());
  EXPECT_EQ(timeline.frames(), 0);
  EXPECT_EQ(timeline.worst_begin(), timeline.worst_end());
}

TEST(FrameTimeline, StepsAreTheGapsBetweenTheMoments) {
  FrameTimeline timeline;
  timeline.reserve(16);
  const auto start = Clock::now();
  timeline.record(0, frame_at(start, 0, 1000, 10, 200, 30, 400));
  timeline.record(1, frame_at(start + microseconds(16667), 0, 500, 20, 300, 40, 2500));
  const nlohmann::json j = timeline.to_json();
  EXPECT_EQ(j["frames"], 2);
  EXPECT_EQ(j["covered_frames"], 2);
  const auto& worst = j["worst"];
  ASSERT_EQ(worst.size(), 2u);
  EXPECT_EQ(worst[0]["frame"], 1);  // 2.86 ms from read to written, frame 0 0.64 ms
  EXPECT_NEAR(worst[0]["latency_ms"].get<double>(), 0.020 + 0.300 + 0.040 + 2.5, 1e-9);
  EXPECT_NEAR(worst[0]["arrival_to_read_ms"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(worst[0]["read_to_taken_ms"].get<double>(), 0.02, 1e-9);
  EXPECT_NEAR(worst[0]["taken_to_processed_ms"].get<double>(), 0.3, 1e-9);
  EXPECT_NEAR(worst[0]["processed_to_write_ms"].get<double>(), 0.04, 1e-9);
  EXPECT_NEAR(worst[0]["write_ms"].get<double>(), 2.5, 1e-9);
  EXPECT_NEAR(worst[0]["arrival_to_written_ms"].get<double>(), 3.36, 1e-9);
  // Written 16.667 + 0.5 + 2.86 ms after the first frame was read.
  EXPECT_NEAR(worst[0]["at_seconds"].get<double>(), (16667 - 1000 + 500 + 2860) * 1e-6, 1e-9);
  EXPECT_NEAR(j["steps_ms"]["write"]["max"].get<double>(), 2.5, 1e-9);
  EXPECT_NEAR(j["steps_ms"]["arrival_to_read"]["max"].get<double>(), 1.0, 1e-9);
}

TEST(FrameTimeline, KeepsTheRunsWorstFramesWorstFirst) {
  std::mt19937_64 rng(fresh_seed());
  FrameTimeline timeline;
  timeline.reserve(64);  // fewer than the frames: the worst list still spans the run
  std::vector<std::pair<int, int64_t>> by_latency;
  const auto start = Clock::now();
  for (int64_t f = 0; f < 1000; ++f) {
    const int write_us = int(rng() % 20000);
    timeline.record(f, frame_at(start + microseconds(16667 * f), 0, 100, 0, 0, 0, write_us));
    by_latency.push_back({write_us, f});
  }
  std::stable_sort(by_latency.begin(), by_latency.end(), [](auto& a, auto& b) { return a.first > b.first; });
  ASSERT_EQ(timeline.worst_end() - timeline.worst_begin(), ptrdiff_t(FrameTimeline::kWorst));
  for (size_t i = 0; i < FrameTimeline::kWorst; ++i) {
    EXPECT_NEAR(timeline.worst_begin()[i].latency, by_latency[i].first / 1000.0, 1e-9) << i;
  }
}

TEST(FrameTimeline, PercentilesCoverTheLatestFrames) {
  FrameTimeline timeline;
  timeline.reserve(100);
  const auto start = Clock::now();
  // 100 slow frames, then 100 fast ones: only the fast ones are still covered.
  for (int64_t f = 0; f < 200; ++f)
    timeline.record(f, frame_at(start + microseconds(16667 * f), 0, 0, 0, f < 100 ? 9000 : 1000, 0, 0));
  const nlohmann::json j = timeline.to_json();
  EXPECT_EQ(j["frames"], 200);
  EXPECT_EQ(j["covered_frames"], 100);
  EXPECT_NEAR(j["steps_ms"]["taken_to_processed"]["max"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(j["worst"][0]["latency_ms"].get<double>(), 9.0, 1e-9);
  EXPECT_LT(j["worst"][0]["frame"].get<int>(), 100);
}

}  // namespace
}  // namespace sp::test
