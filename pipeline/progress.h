#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace sp {

// Where transcodes running side by side in one process leave their counts
// for the run that sums them.
struct SharedProgress {
  std::atomic<int64_t> frames{0};
  std::atomic<double> media_seconds{0};
};

enum class ProgressMode { automatic, tty, plain, json, none };
bool parse_progress_mode(const std::string& text, ProgressMode* out);

// Reports frame, fps, speed (media time / wall time), elapsed, ETA and
// percent: an updating line on a TTY, plain lines every few seconds
// otherwise, NDJSON records with `json`.
class ProgressReporter {
 public:
  ProgressReporter(ProgressMode mode, double media_duration_seconds, int64_t expected_frames);
  void update(int64_t frames, double media_seconds);
  void finish(int64_t frames, double media_seconds);

 private:
  void emit(int64_t frames, double media_seconds, bool final);

  ProgressMode mode_;
  double duration_;
  int64_t expected_frames_;
  std::chrono::steady_clock::time_point start_, last_emit_;
};

}  // namespace sp
