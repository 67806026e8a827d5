// Live input (--low-latency): the whole frame on one thread, and the stats
// sized before the first frame.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "orchestration/transcoder.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace sp::detail {

// With backpressure (`--drop-policy block`) nothing needs a reader running
// ahead: a frame's work (~2 ms) is far shorter than the time between frames
// (16.7 ms at 60 fps), and each hand-off between threads costs a wake-up
// that now and then comes milliseconds late. So one thread reads a frame,
// processes it and writes it, then waits in the pipe for the next. (With
// drop-oldest a reader thread must keep taking frames to drop them.)
void Transcoder::live_loop(MediaReader& reader) {
  try {
    for (ReadItem item; read_next(reader, item.media); item = ReadItem{}) {
      item.read_at = item.taken_at = Clock::now();
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

// Live raw input: the engine, the encoder and the output's header are made
// before the first frame arrives, from what the stream header says (a raw
// pipe's --size and --pix-fmt), and a blank frame goes through the chain to
// load its kernels and fill the buffer pool. Otherwise the first frame would
// wait for all of that (~15 ms on the GPU). A chain with temporal state is
// not warmed: the blank would become its history. A first frame of another
// size or format reconfigures, as any change of size does.
void Transcoder::prepare_live_output(MediaReader& reader) {
  const VideoStreamInfo& video = reader.video();
  // Raw pictures (rawvideo, y4m) are what their header says; a codec's
  // stream may decode to another size or format than its header's.
  if (writer_ || video.codec_name != "rawvideo" || video.size.width <= 0 || video.size.height <= 0) return;
  DecodedFrame blank;
  blank.frame = make_frame();
  blank.frame->format = to_av(video.format);
  blank.frame->width = video.size.width;
  blank.frame->height = video.size.height;
  const int r = av_frame_get_buffer(blank.frame.get(), 0);
  if (r < 0) throw Error(ExitCode::internal, "cannot allocate a warm-up frame: " + av_error_text(r));
  blank.format = video.format;
  blank.color = video.color;
  const PlanarView view = blank.view();
  const PlaneLayout layout = plane_layout(view.format, view.width, view.height);
  for (int i = 0; i < layout.count; ++i) std::memset(view.plane[i], 0, view.pitch[i] * layout.rows[i]);
  start_video(blank, reader);
  if (engine_->chain().any_temporal()) return;
  const auto t0 = Clock::now();
  engine_->submit(view, FrameInfo{}, -1);
  engine_->take_oldest();  // its picture goes back to the pool
  log_debug("live output ready; a warm-up frame took {:.2f} ms",
            std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
}

}  // namespace sp::detail
