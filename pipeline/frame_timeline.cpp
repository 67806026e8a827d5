#include "pipeline/frame_timeline.h"

#include <algorithm>

#include "pipeline/run_stats.h"

namespace sp {

namespace {

double ms_between(FrameTimes::Clock::time_point a, FrameTimes::Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

nlohmann::json steps_json(const FrameSteps& s) {
  return {{"frame", s.frame},
          {"at_seconds", s.at_seconds},
          {"latency_ms", s.latency},
          {"arrival_to_written_ms", s.arrival_to_written},
          {"arrival_to_read_ms", s.arrival_to_read},
          {"read_to_taken_ms", s.read_to_taken},
          {"taken_to_processed_ms", s.taken_to_processed},
          {"processed_to_write_ms", s.processed_to_write},
          {"write_ms", s.write}};
}

}  // namespace

void FrameTimeline::reserve(size_t capacity) {
  recent_.assign(capacity, FrameSteps{});
  worst_count_ = 0;
  recorded_ = 0;
}

void FrameTimeline::record(int64_t frame, const FrameTimes& t) {
  if (recent_.empty()) return;
  if (recorded_ == 0) first_read_ = t.read;
  FrameSteps s;
  s.frame = frame;
  s.at_seconds = std::chrono::duration<double>(t.written - first_read_).count();
  s.arrival_to_read = ms_between(t.arrived, t.read);
  s.read_to_taken = ms_between(t.read, t.taken);
  s.taken_to_processed = ms_between(t.taken, t.processed);
  s.processed_to_write = ms_between(t.processed, t.write_started);
  s.write = ms_between(t.write_started, t.written);
  s.latency = ms_between(t.read, t.written);
  s.arrival_to_written = ms_between(t.arrived, t.written);
  recent_[size_t(recorded_) % recent_.size()] = s;
  ++recorded_;
  // Insertion into the fixed list of the worst frames, worst first.
  size_t at = worst_count_;
  while (at > 0 && worst_[at - 1].latency < s.latency) --at;
  if (at >= kWorst) return;
  if (worst_count_ < kWorst) ++worst_count_;
  for (size_t i = worst_count_ - 1; i > at; --i) worst_[i] = worst_[i - 1];
  worst_[at] = s;
}

nlohmann::json FrameTimeline::to_json() const {
  const size_t covered = std::min(size_t(recorded_), recent_.size());
  Samples arrival_to_read, read_to_taken, taken_to_processed, processed_to_write, write, latency, arrival_to_written;
  for (size_t i = 0; i < covered; ++i) {
    const FrameSteps& s = recent_[i];
    arrival_to_read.add(s.arrival_to_read);
    read_to_taken.add(s.read_to_taken);
    taken_to_processed.add(s.taken_to_processed);
    processed_to_write.add(s.processed_to_write);
    write.add(s.write);
    latency.add(s.latency);
    arrival_to_written.add(s.arrival_to_written);
  }
  nlohmann::json worst = nlohmann::json::array();
  for (size_t i = 0; i < worst_count_; ++i) worst.push_back(steps_json(worst_[i]));
  return {{"frames", recorded_},
          {"covered_frames", covered},
          {"steps_ms",
           {{"arrival_to_read", arrival_to_read.summary()},
            {"read_to_taken", read_to_taken.summary()},
            {"taken_to_processed", taken_to_processed.summary()},
            {"processed_to_write", processed_to_write.summary()},
            {"write", write.summary()},
            {"latency", latency.summary()},
            {"arrival_to_written", arrival_to_written.summary()}}},
          {"worst", worst}};
}

}  // namespace sp
