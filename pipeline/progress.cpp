#include "pipeline/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "pipeline/log.h"

namespace sp {

bool parse_progress_mode(const std::string& text, ProgressMode* out) {
  if (text == "auto") *out = ProgressMode::automatic;
  else if (text == "tty") *out = ProgressMode::tty;
  else if (text == "plain") *out = ProgressMode::plain;
  else if (text == "json") *out = ProgressMode::json;
  else if (text == "none") *out = ProgressMode::none;
  else return false;
  return true;
}

ProgressReporter::ProgressReporter(ProgressMode mode, double media_duration_seconds, int64_t expected_frames)
    : mode_(mode), duration_(media_duration_seconds), expected_frames_(expected_frames) {
  if (mode_ == ProgressMode::automatic) mode_ = isatty(STDERR_FILENO) ? ProgressMode::tty : ProgressMode::plain;
  start_ = last_emit_ = std::chrono::steady_clock::now();
}

void ProgressReporter::update(int64_t frames, double media_seconds) {
  if (mode_ == ProgressMode::none) return;
  const auto now = std::chrono::steady_clock::now();
  // Plain lines go to logs, so they are sparse; NDJSON feeds progress bars.
  const auto interval = mode_ == ProgressMode::plain ? std::chrono::milliseconds(2000)
                        : mode_ == ProgressMode::json ? std::chrono::milliseconds(500)
                                                      : std::chrono::milliseconds(250);
  if (now - last_emit_ < interval) return;
  last_emit_ = now;
  emit(frames, media_seconds, false);
}

void ProgressReporter::finish(int64_t frames, double media_seconds) {
  if (mode_ == ProgressMode::none) return;
  // A run that failed before its first frame has no progress to report to a
  // person; a machine reading NDJSON still gets its final record.
  if (frames > 0 || mode_ == ProgressMode::json) emit(frames, media_seconds, true);
  if (mode_ == ProgressMode::tty) clear_status_line();
}

static std::string clock_text(double seconds) {
  if (seconds < 0) return "--:--";
  const int s = int(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{:02}:{:02}", s / 60, s % 60);
}

void ProgressReporter::emit(int64_t frames, double media_seconds, bool final) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fps = elapsed > 0 ? frames / elapsed : 0;
  const double speed = elapsed > 0 ? media_seconds / elapsed : 0;
  double fraction = -1;
  if (duration_ > 0) fraction = std::min(1.0, media_seconds / duration_);
  else if (expected_frames_ > 0) fraction = std::min(1.0, double(frames) / expected_frames_);
  const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : -1;
  if (mode_ == ProgressMode::json) {
    nlohmann::json j = {{"frame", frames}, {"fps", fps}, {"speed", speed}, {"elapsed", elapsed},
                        {"media_seconds", media_seconds}, {"final", final}};
    if (fraction >= 0) {
      j["percent"] = 100 * fraction;
      j["eta"] = eta;
    }
    std::fprintf(stderr, "%s\n", j.dump().c_str());
    std::fflush(stderr);
    return;
  }
  const std::string line =
      fmt::format("frame {} | {:.1f} fps | {:.2f}x | elapsed {} | ETA {} | {}", frames, fps, speed,
                  clock_text(elapsed), final ? clock_text(0) : clock_text(eta),
                  fraction >= 0 ? fmt::format("{:.0f}%", 100 * fraction) : std::string("?%"));
  if (mode_ == ProgressMode::tty && !final) set_status_line(line);
  else log_info("{}", line);
}

}  // namespace sp
