// Live input (--low-latency): the whole frame on one thread, and the stats
// sized before the first frame.
#include <algorithm>
#include <cmath>

#include "orchestration/transcoder.h"
#include "pipeline/interrupt.h"

namespace sp::detail {

// With backpressure (`--drop-policy block`) nothing needs a reader running
// ahead: a frame's work (~2 ms) is far shorter than the time between frames
// (16.7 ms at 60 fps), and each hand-off between threads costs a wake-up
// that now and then comes milliseconds late. So one thread reads a frame,
// processes it and writes it, then waits in the pipe for the next. (With
// drop-oldest a reader thread must keep taking frames to drop them.)
void Transcoder::live_loop(MediaReader& reader) {
  try {
    for (;;) {
      if (interrupted() || failure_.failed()) break;
      ReadItem item;
      if (!reader.next(item.media)) break;
      item.read_at = item.taken_at = Clock::now();
      if (item.media.kind == MediaItem::Kind::video && !item.media.frame.lead_in) ++stats_.frames_in;
      process_item(item, reader);
    }
    if (writer_ && !failure_.failed()) flush_ready(true);
  } catch (...) {
    failure_.set(std::current_exception());
  }
}

// Recording a frame's numbers must not allocate on the way: room for ten
// minutes of frames at the input's rate, up front. (Past that the timeline
// keeps the latest ten minutes and the run's worst frames; the other
// samples grow as in file runs.)
void Transcoder::reserve_live_stats(const MediaReader& reader) {
  if (!options_.low_latency) return;
  constexpr double kSeconds = 600;
  const double rate = std::max(1.0, av_q2d(reader.video().frame_rate));
  const auto frames = size_t(std::clamp(std::ceil(rate * kSeconds), 1024.0, 1e6));
  live_stats_frames_ = frames;
  stats_.timeline.reserve(frames);
  for (Samples* s : {&stats_.latency_ms, &stats_.upload_ms, &stats_.convert_in_ms, &stats_.convert_out_ms,
                     &stats_.download_ms})
    s->reserve(frames);
}

}  // namespace sp::detail
