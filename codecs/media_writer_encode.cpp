// MediaWriter's steady state: pictures into the encoder, packets into the
// muxer, and the end of the file.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "codecs/media_writer.h"
#include "codecs/muxer.h"
#include "codecs/muxer_names.h"

extern "C" {
#include <libavutil/hwcontext.h>
}
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {

namespace {

void set_frame_duration(AVFrame* f, int64_t duration) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
  f->duration = duration;
#else
  f->pkt_duration = duration;
#endif
}

}  // namespace

void MediaWriter::write_muxed(AVPacket* packet) {
  if (segment_reorder_delay_ > 0 || segment_time_shift_ > 0) offset_for_segment(packet);
  av_packet_rescale_ts(packet, encoder_time_base_, muxer_->video_stream()->time_base);
  muxer_->write_video(packet);
  ++video_packets_muxed_;
}

// First moved later by the input's start below zero s, presentation times
// are not negative. Then moved later by the reorder delay d (in ticks), a
// decode time of at least (packet index - d) is never negative, and still no
// later than the packet's presentation time: packet i shows frame i - d or a
// later one (a decoder holds back at most d frames), and frame k is shown at
// k ticks or later, presentation times being distinct and not negative. NUT
// keeps the presentation times only: the decode times given to its muxer
// just have to be valid, so the encoder's, earlier than that for the first
// frames, are raised where they are.
void MediaWriter::offset_for_segment(AVPacket* packet) const {
  const int64_t d = segment_reorder_delay_, s = segment_time_shift_;
  if (packet->pts == AV_NOPTS_VALUE || packet->pts + s < 0)
    throw Error(ExitCode::data_error, fmt::format("{}: a frame at pts {} (before the input's start) cannot be "
                                                  "kept in a segment", name_, packet->pts));
  const int64_t dts = packet->dts == AV_NOPTS_VALUE ? INT64_MIN : packet->dts + s;
  packet->dts = std::max(dts, video_packets_muxed_ - d) + d;
  packet->pts += s + d;
}

void MediaWriter::drain_encoder() {
  for (;;) {
    const int r = avcodec_receive_packet(encoder_.get(), packet_.get());
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
    if (r < 0) fail(ExitCode::internal, std::string(plan_.encoder->name) + " failed", r);
    auto it = durations_.find(packet_->pts);
    if (it != durations_.end()) {
      if (packet_->duration <= 0) packet_->duration = it->second;
      durations_.erase(it);
    }
    write_muxed(packet_.get());
  }
}

namespace {

// An AVBuffer over memory someone else owns: the encoder's references keep the
// owner alive, the last one releases it.
AVBufferRef* wrap_owned_picture(const PlanarView& picture, int planes, std::shared_ptr<void> owner) {
  uint8_t* begin = picture.plane[0];
  uint8_t* end = begin;
  const PlaneLayout layout = plane_layout(picture.format, picture.width, picture.height);
  for (int i = 0; i < planes; ++i) {
    begin = std::min(begin, picture.plane[i]);
    end = std::max(end, picture.plane[i] + picture.pitch[i] * layout.rows[i]);
  }
  auto* holder = new std::shared_ptr<void>(std::move(owner));
  AVBufferRef* buf = av_buffer_create(
      begin, size_t(end - begin), [](void* opaque, uint8_t*) { delete static_cast<std::shared_ptr<void>*>(opaque); },
      holder, AV_BUFFER_FLAG_READONLY);
  if (!buf) delete holder;
  return buf;
}

}  // namespace

void MediaWriter::check_picture(const PlanarView& picture) const {
  if (finished_) throw Error(ExitCode::internal, name_ + ": picture written after finish()");
  if (picture.format != encoder_format_ || picture.width != output_size_.width ||
      picture.height != output_size_.height)
    throw Error(ExitCode::internal, name_ + ": got a " + std::to_string(picture.width) + "x" +
                                        std::to_string(picture.height) + " " + to_string(picture.format) +
                                        " picture, the encoder takes " + std::to_string(output_size_.width) + "x" +
                                        std::to_string(output_size_.height) + " " + to_string(encoder_format_));
}

int64_t MediaWriter::encoder_pts_for(int64_t pts) {
  const auto near = AVRounding(AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
  int64_t encoder_pts = av_rescale_q_rnd(pts, input_time_base_, encoder_time_base_, near);
  if (constant_rate_only_) {
    // The grid starts at the first frame: a constant rate with an offset
    // stays exact up to that offset.
    if (first_input_pts_ == INT64_MIN) {
      first_input_pts_ = pts;
      first_encoder_pts_ = encoder_pts;
    }
    const int64_t since_first = av_rescale_q_rnd(pts - first_input_pts_, input_time_base_, encoder_time_base_, near);
    encoder_pts = first_encoder_pts_ + since_first;
    const int64_t back = av_rescale_q(since_first, encoder_time_base_, input_time_base_);
    const int64_t tick = std::max<int64_t>(1, av_rescale_q(1, encoder_time_base_, input_time_base_));
    if (!rounded_warned_ && std::llabs(back - (pts - first_input_pts_)) * 10 > tick) {
      const AVRational t = encoder_time_base_;
      const std::string step = t.den == 1 ? fmt::format("{}", t.num) : fmt::format("{}/{}", t.num, t.den);
      warn(fmt::format("{}: {} keeps a constant frame rate: frame times are rounded to steps of {} s", name_,
                       plan_.format->name, step));
      rounded_warned_ = true;
    }
  }
  // Times must increase in the muxer's (possibly coarser) clock too.
  const AVRational muxer_tb = muxer_->video_stream()->time_base;
  if (last_encoder_pts_ != INT64_MIN) {
    const int64_t last_muxed = av_rescale_q_rnd(last_encoder_pts_, encoder_time_base_, muxer_tb, near);
    if (encoder_pts <= last_encoder_pts_ || av_rescale_q_rnd(encoder_pts, encoder_time_base_, muxer_tb, near) <= last_muxed) {
      const std::string why = constant_rate_only_
                                  ? std::string(plan_.format->name) + " keeps a constant frame rate"
                                  : "timestamps must increase";
      if (!adjusted_pts_warned_)
        warn(name_ + ": frame " + std::to_string(frames_written_) + " moved to the next free time slot (" + why + ")");
      adjusted_pts_warned_ = true;
      encoder_pts = std::max(last_encoder_pts_ + 1,
                             av_rescale_q_rnd(last_muxed + 1, muxer_tb, encoder_time_base_, AV_ROUND_UP));
    }
  }
  last_encoder_pts_ = encoder_pts;
  return encoder_pts;
}

// In the encoder's clock; a frame shorter than one of its ticks still lasts one.
int64_t MediaWriter::encoder_duration_of(int64_t duration) const {
  return std::max<int64_t>(1, av_rescale_q(duration, input_time_base_, encoder_time_base_));
}

// Sends a prepared frame (planes set) with its times and the stream's colour tags.
void MediaWriter::encode(AVFrame* f, int64_t encoder_pts, int64_t encoder_duration) {
  f->pts = encoder_pts;
  set_frame_duration(f, encoder_duration);
  f->color_range = encoder_->color_range;
  f->colorspace = encoder_->colorspace;
  f->color_primaries = encoder_->color_primaries;
  f->color_trc = encoder_->color_trc;
  f->sample_aspect_ratio = encoder_->sample_aspect_ratio;
  durations_[encoder_pts] = encoder_duration;
  // A reference-counted frame is referenced by the encoder, any other copied.
  const int r = avcodec_send_frame(encoder_.get(), f);
  av_frame_unref(f);
  if (r < 0) fail(ExitCode::internal, std::string(plan_.encoder->name) + " refused a picture", r);
  ++frames_written_;
  drain_encoder();
}

void MediaWriter::write_video(const PlanarView& picture, int64_t pts, int64_t duration, std::shared_ptr<void> owner) {
  std::lock_guard lock(mutex_);
  if (!wants_more_frames()) {
    if (!extra_images_warned_)
      warn(name_ + " is a single image: only the first picture is written (use a pattern like out_%04d.png for all)");
    extra_images_warned_ = true;
    return;
  }
  check_picture(picture);
  if (picture.on_device) throw Error(ExitCode::internal, name_ + ": a device picture without its encoder frame");
  const int64_t encoder_pts = encoder_pts_for(pts);
  const int64_t encoder_duration = encoder_duration_of(duration);
  if (owner && write_raw_in_place(picture, encoder_pts, encoder_duration, owner)) return;

  AVFrame* f = frame_.get();
  av_frame_unref(f);
  f->format = encoder_av_format_;
  f->width = encoded_size_.width;  // a cropped odd line simply is not read
  f->height = encoded_size_.height;
  const int planes = plane_layout(encoder_format_, picture.width, picture.height).count;
  for (int i = 0; i < planes; ++i) {
    f->data[i] = picture.plane[i];
    f->linesize[i] = int(picture.pitch[i]);
  }
  if (owner && !(f->buf[0] = wrap_owned_picture(picture, planes, std::move(owner))))
    fail(ExitCode::internal, "cannot wrap a picture", AVERROR(ENOMEM));
  encode(f, encoder_pts, encoder_duration);
}

DevicePicture MediaWriter::acquire_device_picture() {
  if (!device_frames_) throw Error(ExitCode::internal, name_ + ": the encoder takes no device pictures");
  FramePtr f = make_frame();
  const int r = av_hwframe_get_buffer(device_frames_, f.get(), 0);
  if (r < 0) fail(ExitCode::internal, "cannot get an encoder surface", r);
  DevicePicture p;
  p.view.format = encoder_format_;
  p.view.width = output_size_.width;
  p.view.height = output_size_.height;
  p.view.on_device = true;
  for (int i = 0; i < plane_layout(encoder_format_, 2, 2).count; ++i) {
    p.view.plane[i] = f->data[i];
    p.view.pitch[i] = size_t(f->linesize[i]);
  }
  p.frame = std::shared_ptr<AVFrame>(f.release(), [](AVFrame* frame) { av_frame_free(&frame); });
  return p;
}

void MediaWriter::write_video(DevicePicture picture, int64_t pts, int64_t duration) {
  std::lock_guard lock(mutex_);
  check_picture(picture.view);
  if (!device_frames_ || !picture.frame || !picture.frame->hw_frames_ctx ||
      picture.frame->hw_frames_ctx->data != device_frames_->data)
    throw Error(ExitCode::internal, name_ + ": a device picture from another pool");
  const int64_t encoder_pts = encoder_pts_for(pts);
  const int64_t encoder_duration = encoder_duration_of(duration);
  // The encoder takes its own reference; our copy of the frame goes with `picture`.
  AVFrame* f = frame_.get();
  av_frame_unref(f);
  const int r = av_frame_ref(f, picture.frame.get());
  if (r < 0) fail(ExitCode::internal, "cannot reference a picture", r);
  encode(f, encoder_pts, encoder_duration);
}

// rawvideo's encoder only copies the planes back to back into a packet: when
// the picture already is laid out so, the packet is the picture itself. Saves
// a copy of every frame, which live output feels as latency.
bool MediaWriter::write_raw_in_place(const PlanarView& picture, int64_t pts, int64_t duration,
                                     std::shared_ptr<void>& owner) {
  const bool raw_muxer = muxer_->takes_raw_pictures();
  if ((plan_.encoder->id != AV_CODEC_ID_RAWVIDEO && !raw_muxer) || encoded_size_ != Size{picture.width, picture.height})
    return false;
  const PlaneLayout layout = plane_layout(encoder_format_, picture.width, picture.height);
  for (int i = 0; i < layout.count; ++i) {
    if (picture.pitch[i] != layout.pitch[i]) return false;
    if (i > 0 && picture.plane[i] != picture.plane[i - 1] + layout.pitch[i - 1] * layout.rows[i - 1]) return false;
  }
  AVPacket* p = packet_.get();
  av_packet_unref(p);
  if (!(p->buf = wrap_owned_picture(picture, layout.count, std::move(owner))))
    fail(ExitCode::internal, "cannot wrap a picture", AVERROR(ENOMEM));
  p->data = picture.plane[0];
  p->size = int(layout.total_bytes());
  p->pts = p->dts = pts;
  p->duration = duration;
  p->flags |= AV_PKT_FLAG_KEY;
  ++frames_written_;
  if (raw_muxer) {
    muxer_->write_raw_picture(p);
    return true;
  }
  write_muxed(p);
  return true;
}

void MediaWriter::write_packet(const AVPacket* packet) {
  std::lock_guard lock(mutex_);
  if (finished_ || !packet) return;
  muxer_->write_copied(packet);
}

void MediaWriter::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  std::exception_ptr first;
  if (encoder_ && muxer_) {
    try {
      const int r = avcodec_send_frame(encoder_.get(), nullptr);
      if (r < 0 && r != AVERROR_EOF) fail(ExitCode::internal, "cannot flush the encoder", r);
      drain_encoder();
    } catch (...) {
      first = std::current_exception();
    }
  }
  if (muxer_) {
    bool playable = false;
    try {
      muxer_->finish();
      playable = true;
    } catch (...) {
      if (!first) first = std::current_exception();
      // A full disk or a size limit stops the trailer; what was written plays
      // without it, except in MP4/MOV, whose index is the trailer.
      playable = frames_written_ > 0 && !is_mov_family(plan_.format);
      if (playable) log_warning("{}: kept what was written, without the container's trailer", name_);
      else muxer_->discard();  // nothing playable: the temporary file goes, an existing output stays
    }
    // Finalized after a failed flush still plays: it takes the name too.
    if (playable && writes_temporary_) {
      try {
        publish_output();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
  }
  if (first) std::rethrow_exception(first);
  log_debug("{}: finished: {} pictures, {} copied packets", name_, frames_written_, packets_copied());
}

// The finished file takes the output's name; without a single picture it is
// no result, and an existing output keeps its content.
void MediaWriter::publish_output() {
  const std::string temporary = temporary_output_path(plan_.ffmpeg_url);
  std::error_code ec;
  if (frames_written_ == 0) {
    std::filesystem::remove(temporary, ec);
    log_warning("{}: no picture was written; the output was left as it was", name_);
    return;
  }
  move_into_place(temporary, plan_.ffmpeg_url, ec);
  if (ec) throw Error(ExitCode::io_error, name_ + ": cannot rename " + temporary + " to it: " + ec.message());
}

std::string MediaWriter::description() const {
  std::string d = std::string(plan_.encoder->name) + encoder_settings_ + " -> " + plan_.format->name + " (" +
                  av_get_pix_fmt_name(encoder_av_format_);
  if (!is_rgb(encoder_format_)) d += std::string(", ") + to_string(encoder_color_.matrix) + " " + to_string(encoder_color_.range);
  if (encoded_size_ != output_size_)
    d += ", cropped to " + std::to_string(encoded_size_.width) + "x" + std::to_string(encoded_size_.height);
  return d + ")";
}

}  // namespace sp
