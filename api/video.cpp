#include "stylepipe/video.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "api/public_errors.h"
#include "api/session_impl.h"
#include "api/video_device.h"
#include "codecs/media_reader.h"
#include "codecs/media_writer.h"
#include "pipeline/convert.h"
#include "pipeline/device.h"

namespace stylepipe {

namespace {

sp::RgbaView view_of(const Image& i) { return {i.data, i.width, i.height, i.pitch}; }

std::shared_ptr<Session> checked(std::shared_ptr<Session> session) {
  if (!session) throw Error(ExitCode::usage, "video needs a session (stylepipe::Session::open)");
  return session;
}

bool on_cuda(const Session& s) { return s.device().backend == Backend::cuda; }

// A frame and the pooled buffer under its image, given back with the frame.
struct OwnedFrame : VideoFrame {
  std::shared_ptr<Session> session;  // declared first, so destroyed last: its pool outlives the buffer
  sp::PooledBuffer buffer;
};

}  // namespace

struct VideoReader::Impl {
  std::shared_ptr<Session> session;
  std::optional<sp::MediaReader> reader;
  std::optional<detail::DeviceFrameConverter> converter;  // CUDA sessions
  VideoInfo info;
  int64_t frames = 0;
};

VideoReader::VideoReader(const std::string& path, std::shared_ptr<Session> session, const std::string& hwdec)
    : impl_(std::make_unique<Impl>()) {
  detail::guarded([&] {
    impl_->session = checked(std::move(session));
    Session::Impl& s = impl_->session->impl();
    s.enter();
    sp::InputOptions options;
    options.url = path;
    const std::optional<sp::HwDecode> mode = sp::parse_hwdec(hwdec);
    if (!mode) throw Error(ExitCode::usage, "hwdec '" + hwdec + "' is not auto, nvdec or none");
    if (!on_cuda(*impl_->session) && *mode == sp::HwDecode::nvdec)
      throw Error(ExitCode::usage, "hwdec nvdec decodes into GPU memory: open the reader on a CUDA session");
    options.hwdec = on_cuda(*impl_->session) ? *mode : sp::HwDecode::none;
    impl_->reader.emplace(options);
    if (on_cuda(*impl_->session)) impl_->converter.emplace(s.pool);
    const sp::VideoStreamInfo& v = impl_->reader->video();
    impl_->info = {v.size.width, v.size.height, av_q2d(v.frame_rate), v.duration_seconds, v.frame_count_estimate,
                   v.codec_name};
  });
}

VideoReader::~VideoReader() {
  if (impl_ && impl_->session) impl_->session->impl().enter();
}

const VideoInfo& VideoReader::info() const { return impl_->info; }

bool VideoReader::hardware_decoding() const { return impl_->reader->decodes_on_device(); }

std::shared_ptr<VideoFrame> VideoReader::next(void* cuda_stream) {
  return detail::guarded([&]() -> std::shared_ptr<VideoFrame> {
    Session::Impl& s = impl_->session->impl();
    s.enter();
    sp::MediaItem item;
    while (impl_->reader->next(item))
      if (item.kind == sp::MediaItem::Kind::video) break;
    if (item.kind != sp::MediaItem::Kind::video) {
      if (auto problem = impl_->reader->data_error())
        throw sp::Error(sp::ExitCode::data_error, impl_->reader->video().codec_name + " input: " + *problem);
      return nullptr;
    }
    const sp::VideoStreamInfo& v = impl_->reader->video();
    const sp::Size size = item.frame.size();
    auto frame = std::make_shared<OwnedFrame>();
    frame->session = impl_->session;
    const size_t pitch = size_t(size.width) * 4;
    const bool cuda = on_cuda(*impl_->session);
    frame->buffer = sp::PooledBuffer(s.pool, {cuda ? sp::MemoryKind::device : sp::MemoryKind::host, size.width,
                                              size.height, -3, pitch * size_t(size.height)});
    frame->image = {frame->buffer.data(), size.width, size.height, pitch};
    frame->index = impl_->frames++;
    frame->time_seconds = item.frame.pts * av_q2d(v.time_base) - double(v.file_start_us) / 1e6;
    frame->duration_seconds = item.frame.duration * av_q2d(v.time_base);
    frame->cuda_stream = cuda_stream;
    if (cuda) impl_->converter->to_rgba(std::move(item.frame), frame->image, cuda_stream);
    else sp::convert_to_rgba_cpu(item.frame.view(), item.frame.color, view_of(frame->image));
    // The frame and its buffer go together; the buffer goes back to the pool
    // on the session's device.
    return std::shared_ptr<VideoFrame>(frame, static_cast<VideoFrame*>(frame.get()));
  });
}

struct VideoWriter::Impl {
  std::shared_ptr<Session> session;
  std::optional<sp::MediaWriter> writer;
  sp::VideoStreamInfo video;
  sp::PooledBuffer planes;  // host planes for the encoder
  sp::PlanarView planar;
  bool closed = false;
};

namespace {

sp::OutputOptions output_options(const std::string& path, const VideoWriterOptions& o, bool gpu) {
  sp::OutputOptions out;
  out.url = path;
  out.codec = o.codec;
  out.format = o.format;
  out.preset = o.preset;
  out.pixel_format = o.pixel_format;
  out.crf = o.crf;
  out.overwrite = o.overwrite;
  out.gpu_in_use = gpu;
  return out;
}

}  // namespace

static void open_writer(VideoWriter::Impl& w, const std::string& path, const VideoWriterOptions& options) {
  Session::Impl& s = w.session->impl();
  s.enter();
  const sp::OutputOptions output = output_options(path, options, on_cuda(*w.session));
  sp::MediaWriter::preflight(output);  // an existing file without overwrite, an unwritable folder: before any frame
  w.writer.emplace(output, w.video, w.video.size);
  const sp::Size size = w.writer->output_size();
  const sp::PlaneLayout layout = sp::plane_layout(w.writer->encoder_format(), size.width, size.height);
  w.planes = sp::PooledBuffer(s.pool, {on_cuda(*w.session) ? sp::MemoryKind::pinned_host : sp::MemoryKind::host,
                                       size.width, size.height, int(w.writer->encoder_format()) + 2000,
                                       layout.total_bytes()});
  w.planar.format = w.writer->encoder_format();
  w.planar.width = size.width;
  w.planar.height = size.height;
  uint8_t* at = w.planes.data();
  for (int i = 0; i < layout.count; ++i) {
    w.planar.plane[i] = at;
    w.planar.pitch[i] = layout.pitch[i];
    at += layout.bytes(i);
  }
}

VideoWriter::VideoWriter(const std::string& path, int width, int height, double frame_rate,
                         std::shared_ptr<Session> session, const VideoWriterOptions& options)
    : impl_(std::make_unique<Impl>()) {
  detail::guarded([&] {
    impl_->session = checked(std::move(session));
    if (width <= 0 || height <= 0 || !(frame_rate > 0))
      throw Error(ExitCode::usage, "a video writer needs a size and a frame rate, got " + std::to_string(width) + "x" +
                                       std::to_string(height) + " at " + std::to_string(frame_rate) + " fps");
    impl_->video.size = {width, height};
    impl_->video.frame_rate = av_d2q(frame_rate, 1000000);
    impl_->video.time_base = av_inv_q(impl_->video.frame_rate);
    impl_->video.color = {height > 576 ? sp::ColorMatrix::bt709 : sp::ColorMatrix::bt601, sp::ColorRange::limited};
    open_writer(*impl_, path, options);
  });
}

VideoWriter::VideoWriter(const std::string& path, const VideoReader& like, std::shared_ptr<Session> session,
                         const VideoWriterOptions& options)
    : impl_(std::make_unique<Impl>()) {
  detail::guarded([&] {
    impl_->session = checked(std::move(session));
    impl_->video = like.impl().reader->video();
    impl_->video.file_start_us = 0;  // write() takes times from the input's start
    open_writer(*impl_, path, options);
  });
}

VideoWriter::~VideoWriter() {
  if (impl_ && impl_->writer && !impl_->closed) {
    try {
      close();
    } catch (const std::exception&) {  // the writer has said why; a destructor cannot throw
    }
  }
}

void VideoWriter::write(const Image& image, double time_seconds, void* cuda_stream, std::optional<double> duration) {
  detail::guarded([&] {
    if (impl_->closed) throw Error(ExitCode::usage, "write after close");
    Session::Impl& s = impl_->session->impl();
    s.enter();
    const sp::Size size = impl_->writer->output_size();
    if (image.width != size.width || image.height != size.height || !image.data || image.pitch < size_t(image.width) * 4)
      throw Error(ExitCode::usage, "the writer takes " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                                       " RGBA images, got " + std::to_string(image.width) + "x" + std::to_string(image.height));
    const sp::ColorSpec color = impl_->writer->encoder_color();
    if (on_cuda(*impl_->session)) {
      detail::check_device_memory(image.data, s.device.index, "the image");
      detail::device_rgba_to_host_planes(image, color, impl_->planar, s.pool, cuda_stream);
    } else {
      sp::convert_from_rgba_cpu(view_of(image), color, impl_->planar);
    }
    const double tb = av_q2d(impl_->video.time_base);
    const double shown = duration.value_or(1.0 / av_q2d(impl_->video.frame_rate));
    impl_->writer->write_video(impl_->planar, std::llround(time_seconds / tb),
                               std::max<int64_t>(1, std::llround(shown / tb)));
  });
}

void VideoWriter::close() {
  detail::guarded([&] {
    if (impl_->closed) return;
    impl_->closed = true;
    impl_->session->impl().enter();
    impl_->writer->finish();
  });
}

}  // namespace stylepipe
