#include "orchestration/preview_frames.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <deque>

#include "pipeline/errors.h"
#include "pipeline/frame_engine.h"
#include "pipeline/stage.h"

namespace sp {

Warmup warmup_of(const std::vector<StageSpec>& stages) {
  Warmup w;
  for (const StageSpec& s : stages) w.add(*StageRegistry::instance().create(s.name, s.params));
  return w;
}

PreviewFrames decode_preview_frames(const std::string& input, double at_seconds, const Warmup& warmup) {
  PreviewFrames frames;
  InputOptions probe_options;
  probe_options.url = input;
  probe_options.decode_video = false;
  const VideoStreamInfo probed = MediaReader(probe_options).video();
  frames.frame_rate = av_q2d(probed.frame_rate);
  const int warmup_frames = warmup.frames_at(frames.frame_rate);
  // Two frames of slack: the rate is an average, and the first frames after a seek may be dropped.
  const double lead_seconds = warmup_frames > 0 ? (warmup_frames + 2) / frames.frame_rate : 0.0;
  InputOptions options;
  options.url = input;
  options.start_seconds = std::max(0.0, at_seconds - lead_seconds);
  MediaReader reader(options);
  const VideoStreamInfo& video = reader.video();
  // The reader moves pictures back by the start it sought to; undo it exactly as it was done.
  const int64_t shift = options.start_seconds > 0
                            ? av_rescale_q(std::llround(options.start_seconds * AV_TIME_BASE), AV_TIME_BASE_Q,
                                           video.time_base)
                            : 0;
  const int64_t at_us = video.file_start_us + std::llround(at_seconds * AV_TIME_BASE);
  std::deque<DecodedFrame> held;
  MediaItem item;
  while (reader.next(item)) {
    if (item.kind != MediaItem::Kind::video) continue;
    const int64_t t_us = av_rescale_q(item.frame.pts + shift, video.time_base, AV_TIME_BASE_Q);
    if (t_us < at_us) {
      held.push_back(std::move(item.frame));
      if (int(held.size()) > warmup_frames) held.pop_front();
      continue;
    }
    frames.target = std::move(item.frame);
    frames.target_seconds = double(t_us - video.file_start_us) / AV_TIME_BASE;
    frames.warmup.assign(std::make_move_iterator(held.begin()), std::make_move_iterator(held.end()));
    return frames;
  }
  if (auto problem = reader.data_error()) throw Error(ExitCode::data_error, input + ": " + *problem);
  const std::string ends = probed.duration_seconds >= 0 ? fmt::format(" (it lasts {:.3f} s)", probed.duration_seconds) : "";
  throw Error(ExitCode::usage, fmt::format("--at {}: {} has no frame at or after that time{}", at_seconds, input, ends));
}

RgbaImage render_tile(const std::vector<StageSpec>& stages, const PreviewFrames& frames, Backend backend,
                      BufferPool& pool) {
  auto engine = backend == Backend::cuda ? make_cuda_engine(stages, pool, 1) : make_cpu_engine(stages, pool);
  const PlanarView target = frames.target.view();
  EngineFormats formats;
  formats.input_size = {target.width, target.height};
  formats.input_format = target.format;
  formats.input_color = frames.target.color;
  formats.output_format = PixelFormat::rgba;  // the chain's own output, unconverted
  formats.output_color = frames.target.color;
  engine->configure(formats);
  auto submit = [&](const DecodedFrame& frame, double seconds) {
    const PlanarView v = frame.view();
    FrameInfo info;
    info.time_seconds = seconds;
    info.index = std::llround(seconds * frames.frame_rate);  // its number in a run from the start
    while (!engine->can_submit()) engine->take_oldest();
    engine->submit(v, info, info.index);
  };
  const double frame_seconds = 1.0 / frames.frame_rate;
  for (size_t i = 0; i < frames.warmup.size(); ++i) {
    const DecodedFrame& f = frames.warmup[i];
    if (f.size() == frames.target.size() && f.format == frames.target.format)
      submit(f, frames.target_seconds - double(frames.warmup.size() - i) * frame_seconds);
  }
  submit(frames.target, frames.target_seconds);
  EngineFrame last;
  while (engine->in_flight()) last = engine->take_oldest();
  if (last.picture.on_device || last.picture.format != PixelFormat::rgba)
    throw Error(ExitCode::internal, "preview: the engine did not hand back a host RGBA picture");
  RgbaImage image;
  image.width = last.picture.width;
  image.height = last.picture.height;
  image.pixels.resize(size_t(image.width) * image.height * 4);
  for (int y = 0; y < image.height; ++y)
    std::memcpy(image.pixels.data() + size_t(y) * image.width * 4, last.picture.plane[0] + y * last.picture.pitch[0],
                size_t(image.width) * 4);
  return image;
}

}  // namespace sp
