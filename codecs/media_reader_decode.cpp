// MediaReader's read loop: packets in, pictures and copied packets out.
extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "codecs/media_reader.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {

namespace {

int64_t frame_duration_of(const AVFrame* f) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
  return f->duration;
#else
  return f->pkt_duration;
#endif
}

// Decoders give up to this many errors on a stream that starts mid-GOP before
// a first clean picture; more than that and the input is not video we can read.
constexpr int kMaxErrorsBeforeFirstFrame = 200;

}  // namespace

void MediaReader::note_corruption(const std::string& what) {
  if (!data_error_) {
    data_error_ = name_ + ": " + what;
    log_warning("{} (stopping after {} frames)", *data_error_, frames_delivered_);
  }
  stop_reading_ = true;
}

// The demuxers report truncation only in their log (matroska: "File ended
// prematurely"; mov: "partial file"); any error line from them while reading
// is treated as damaged input. The generic "Packet corrupt" line is left to
// the decoder's verdict: a concatenation of transport streams triggers it on
// packets that decode cleanly.
void MediaReader::check_demuxer_log() {
  for (const std::string& line : log_watch_->take_errors()) {
    const std::string text = strip_log_prefix(line);
    if (text.rfind("Packet corrupt", 0) == 0) continue;
    note_corruption(text);
    return;
  }
}

// Decoders conceal damage and say so in their log; with frame threads the
// picture's error flags are not always set. An error line once pictures
// flow stops the reading: what is in flight is still delivered.
void MediaReader::check_decoder_log() {
  const std::vector<std::string> errors = decode_log_->take_errors();
  if (errors.empty()) return;
  if (!first_frame_seen_) {
    decode_errors_before_first_frame_ += int(errors.size());
    if (decode_errors_before_first_frame_ <= kMaxErrorsBeforeFirstFrame) return;
  }
  note_corruption("damaged video data after frame " + std::to_string(frames_delivered_) + " (" +
                  strip_log_prefix(errors.front()) + ")");
}

// A packet the decoder refuses stops the reading (the pictures before it
// still come out); a picture it cannot produce ends the video.
void MediaReader::decode_failed(int error, bool receiving) {
  if (error == AVERROR(ENOMEM)) throw Error(ExitCode::internal, name_ + ": out of memory while decoding");
  if (!first_frame_seen_ && ++decode_errors_before_first_frame_ <= kMaxErrorsBeforeFirstFrame) return;
  std::string detail = strip_log_prefix(decode_log_->last_error());
  note_corruption("cannot decode video: " + av_error_text(error) + (detail.empty() ? "" : " (" + detail + ")"));
  if (receiving) finished_ = true;
}

// Copied packets: drops what falls outside --start/--duration, moves the rest
// back by the --start offset.
bool MediaReader::keep_packet(AVPacket* packet) {
  if (packet->flags & AV_PKT_FLAG_CORRUPT) {
    if (!logged_corrupt_copy_)
      log_warning("{}: dropping a corrupt packet of stream #{}", name_, packet->stream_index);
    logged_corrupt_copy_ = true;
    return false;
  }
  const AVRational tb = format_->streams[packet->stream_index]->time_base;
  const int64_t t = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
  if (t != AV_NOPTS_VALUE) {
    const int64_t start = av_rescale_q(t, tb, AV_TIME_BASE_Q);
    const int64_t end = start + av_rescale_q(packet->duration, tb, AV_TIME_BASE_Q);
    if (start_us_ != INT64_MIN && end <= start_us_) return false;
    if (start >= end_us_) return false;
  }
  if (shift_us_) {
    const int64_t shift = av_rescale_q(shift_us_, AV_TIME_BASE_Q, tb);
    if (packet->pts != AV_NOPTS_VALUE) packet->pts -= shift;
    if (packet->dts != AV_NOPTS_VALUE) packet->dts -= shift;
  }
  return true;
}

// A decoder gives each picture its packet's duration, or none; receive_frame()
// puts in the nominal one then. A packet the demuxer marks to discard (an MP4
// edit list ends before it: FFmpeg 7's `-t` leaves such a last frame) is
// decoded for the frames after it but shows nothing.
void MediaReader::note_video_packet(const AVPacket* packet) {
  const int64_t shift = av_rescale_q(shift_us_, AV_TIME_BASE_Q, video_.time_base);
  if (packet->dts != AV_NOPTS_VALUE)
    latest_video_dts_ = latest_video_dts_ == AV_NOPTS_VALUE ? packet->dts - shift
                                                            : std::max(latest_video_dts_, packet->dts - shift);
  if (packet->pts == AV_NOPTS_VALUE || (packet->flags & AV_PKT_FLAG_DISCARD)) return;
  const int64_t pts = packet->pts - shift;
  if (pts < video_frames_forgotten_before_) return;
  const FrameTime frame{pts, packet->duration > 0 ? packet->duration : default_duration_};
  std::deque<FrameTime>& frames = video_frames_read_;
  auto at = std::lower_bound(frames.begin(), frames.end(), pts, [](const FrameTime& f, int64_t t) { return f.pts < t; });
  if (at != frames.end() && at->pts == pts)
    *at = frame;
  else
    frames.insert(at, frame);
}

void MediaReader::forget_video_frames_before(int64_t pts) {
  video_frames_forgotten_before_ = std::max(video_frames_forgotten_before_, pts);
  while (!video_frames_read_.empty() && video_frames_read_.front().pts < video_frames_forgotten_before_)
    video_frames_read_.pop_front();
}

bool MediaReader::video_read_through(int64_t pts) const {
  if (stop_reading_ || finished_) return true;
  if (latest_video_dts_ != AV_NOPTS_VALUE && latest_video_dts_ >= pts) return true;
  const auto later = std::upper_bound(video_frames_read_.begin(), video_frames_read_.end(), pts,
                                      [](int64_t t, const FrameTime& f) { return t < f.pts; });
  return size_t(video_frames_read_.end() - later) > kMaxReorderedFrames;
}

// Formats made of fixed-size units whose demuxers drop a partial last unit
// without a word: bytes left over mean the file was cut.
void MediaReader::check_file_end() {
  if (!format_->pb || !(format_->pb->seekable & AVIO_SEEKABLE_NORMAL)) return;
  const int64_t size = avio_size(format_->pb);
  if (size <= 0) return;
  const char* name = format_->iformat->name;
  if (std::strcmp(name, "yuv4mpegpipe") == 0 && last_video_end_ > 0 && size > last_video_end_)
    note_corruption("ends in an incomplete frame (truncated file)");
  // Transport streams: 188-byte packets (192 in M2TS, 204 with FEC).
  if (std::strcmp(name, "mpegts") == 0 && size % 188 != 0 && size % 192 != 0 && size % 204 != 0)
    note_corruption("ends in a partial transport packet (truncated file)");
}

bool MediaReader::next(MediaItem& item) {
  item.reset();
  for (;;) {
    if (options_.max_frames >= 0 && frames_delivered_ >= options_.max_frames) finished_ = true;
    if (finished_) return false;
    if (receive_frame(item)) return true;
    if (finished_) return false;

    if (packet_pending_) {
      const int r = avcodec_send_packet(decoder_.get(), packet_.get());
      if (r == AVERROR(EAGAIN)) continue;  // the decoder still has frames for us
      packet_pending_ = false;
      av_packet_unref(packet_.get());
      if (r < 0) decode_failed(r, false);
      continue;
    }
    if (stop_reading_) {
      if (draining_ || !decoder_) {
        finished_ = true;
        return false;
      }
      avcodec_send_packet(decoder_.get(), nullptr);
      draining_ = true;
      continue;
    }

    if (!wait_for_input()) {
      stop_reading_ = true;  // interrupted: what was read still goes out
      continue;
    }
    const int r = av_read_frame(format_, packet_.get());
    check_demuxer_log();
    check_decoder_log();
    if (r == AVERROR(EAGAIN)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (r < 0) {
      if (r != AVERROR_EOF && r != AVERROR_EXIT) note_corruption("read error: " + av_error_text(r));
      // Incomplete packets among the last few mean the file was cut off (the
      // transport stream demuxer flushes what it holds at the end, so the
      // flagged packet need not be the very last). Earlier ones, as at the
      // joint of concatenated transport streams, are only a warning.
      const int64_t streams_in_use = 1 + int64_t(copy_streams_.size());
      if (r == AVERROR_EOF && last_incomplete_stream_ >= 0 && packets_since_incomplete_ <= 2 * streams_in_use)
        note_corruption("stream #" + std::to_string(last_incomplete_stream_) +
                        " ends in an incomplete packet (truncated file)");
      if (r == AVERROR_EOF) check_file_end();
      stop_reading_ = true;
      continue;
    }
    const int index = packet_->stream_index;
    ++packets_since_incomplete_;
    if (packet_->flags & AV_PKT_FLAG_CORRUPT) {
      last_incomplete_stream_ = index;
      packets_since_incomplete_ = 0;
    }
    if (index == video_.stream_index && before_awaited_keyframe(packet_.get())) {
      av_packet_unref(packet_.get());
    } else if (index == video_.stream_index && decoder_) {
      if (packet_->pos >= 0) last_video_end_ = packet_->pos + packet_->size;
      packet_pending_ = true;
    } else if (index == video_.stream_index) {
      note_video_packet(packet_.get());
      av_packet_unref(packet_.get());
    } else if (index >= 0 && size_t(index) < copy_by_index_.size() && copy_by_index_[index] &&
               keep_packet(packet_.get())) {
      item.kind = MediaItem::Kind::packet;
      item.packet = av_packet_alloc();
      if (!item.packet) throw std::bad_alloc();
      av_packet_move_ref(item.packet, packet_.get());
      return true;
    } else {
      av_packet_unref(packet_.get());
    }
  }
}

bool MediaReader::receive_frame(MediaItem& item) {
  if (!decoder_) return false;
  for (;;) {
    const int r = avcodec_receive_frame(decoder_.get(), decoded_.get());
    if (r == AVERROR(EAGAIN)) {
      if (draining_) finished_ = true;  // cannot happen after a flush, but never spin
      return false;
    }
    if (r == AVERROR_EOF) {
      check_decoder_log();  // the last pictures' complaints
      finished_ = true;
      return false;
    }
    if (r < 0) {
      decode_failed(r, true);
      if (finished_) return false;
      continue;
    }
    check_decoder_log();
    const bool damaged = decoded_->decode_error_flags != 0 || (decoded_->flags & AV_FRAME_FLAG_CORRUPT);
    if (damaged) {
      av_frame_unref(decoded_.get());
      if (!first_frame_seen_ && ++decode_errors_before_first_frame_ <= kMaxErrorsBeforeFirstFrame) continue;
      note_corruption("damaged picture after frame " + std::to_string(frames_delivered_) +
                      " (truncated or corrupt video data)");
      finished_ = true;
      return false;
    }
    int64_t pts = decoded_->best_effort_timestamp;
    if (pts == AV_NOPTS_VALUE) pts = last_pts_ == AV_NOPTS_VALUE ? 0 : last_pts_ + last_duration_;
    const int64_t t_us = av_rescale_q(pts, video_.time_base, AV_TIME_BASE_Q);
    if (start_us_ != INT64_MIN && t_us < start_us_) {
      av_frame_unref(decoded_.get());
      continue;
    }
    if (t_us >= end_us_ || (options_.window && pts >= options_.window->end)) {
      av_frame_unref(decoded_.get());
      finished_ = true;
      return false;
    }
    const bool lead_in = options_.window && pts < options_.window->begin;
    if (lead_in && !options_.window->lead_in) {
      av_frame_unref(decoded_.get());
      continue;
    }
    int64_t duration = frame_duration_of(decoded_.get());
    if (duration <= 0) duration = default_duration_;
    last_pts_ = pts;
    last_duration_ = duration;
    item.frame.pts = pts - av_rescale_q(shift_us_, AV_TIME_BASE_Q, video_.time_base);
    item.frame.duration = duration;
    item.frame.lead_in = lead_in;
    deliver(item);
    return true;
  }
}

// NV12 and P010 surfaces are read in place by the conversion kernels; other
// layouts NVDEC gives (4:4:4, 12-bit) come to host memory first.
FramePtr MediaReader::take_device_frame(AVFrame* decoded, PixelFormat* format) {
  const AVPixelFormat layout = device_frame_layout(decoded);
  FramePtr out = make_frame();
  if (layout == AV_PIX_FMT_NV12 || layout == AV_PIX_FMT_P010) {
    *format = layout == AV_PIX_FMT_NV12 ? PixelFormat::nv12 : PixelFormat::p010;
    av_frame_move_ref(out.get(), decoded);
    return out;
  }
  if (!logged_device_download_)
    log_info("{}: NVDEC gives {}, which is copied to host memory", name_, av_get_pix_fmt_name(layout));
  logged_device_download_ = true;
  int r = av_hwframe_transfer_data(out.get(), decoded, 0);
  if (r >= 0) r = av_frame_copy_props(out.get(), decoded);
  if (r < 0) throw Error(ExitCode::internal, name_ + ": cannot copy a picture from the GPU: " + av_error_text(r));
  av_frame_unref(decoded);
  return convert(out.get(), format);
}

FramePtr MediaReader::convert(AVFrame* decoded, PixelFormat* format) {
  if (decoded->format == AV_PIX_FMT_CUDA) return take_device_frame(decoded, format);
  const AVPixelFormat in = AVPixelFormat(decoded->format);
  FramePtr out = make_frame();
  const auto exact = from_av_exact(in);
  bool negative_pitch = false;
  for (int i = 0; i < AV_NUM_DATA_POINTERS && decoded->data[i]; ++i) negative_pitch |= decoded->linesize[i] < 0;
  if (exact && !negative_pitch) {
    *format = *exact;
    av_frame_move_ref(out.get(), decoded);
    return out;
  }
  *format = exact ? *exact : nearest_supported(in);
  out->format = exact ? in : to_av(*format);
  out->width = decoded->width;
  out->height = decoded->height;
  int r = av_frame_get_buffer(out.get(), 0);
  if (r < 0) throw Error(ExitCode::internal, name_ + ": cannot allocate a frame: " + av_error_text(r));
  if (exact) {
    r = av_frame_copy(out.get(), decoded);  // rows bottom-up in the decoder: copy them the right way round
    if (r < 0) throw Error(ExitCode::internal, name_ + ": frame copy failed: " + av_error_text(r));
  } else {
    if (!logged_conversion_)
      log_debug("{}: the decoder gives {}; converting to {} with swscale", name_, av_get_pix_fmt_name(in),
                to_string(*format));
    logged_conversion_ = true;
    sws_.reset(sws_getCachedContext(sws_.release(), decoded->width, decoded->height, in, out->width, out->height,
                                    AVPixelFormat(out->format), SWS_BICUBIC | SWS_ACCURATE_RND, nullptr, nullptr,
                                    nullptr));
    if (!sws_)
      throw Error(ExitCode::unavailable, name_ + ": swscale cannot convert " + av_get_pix_fmt_name(in) + " to " +
                                             to_string(*format));
    // Keep the range as it is (a YUV -> YUV reshuffle must not compress it).
    const ColorSpec c = color_from_tags(decoded->colorspace, decoded->color_range, in, decoded->height);
    const int full = c.range == ColorRange::full ? 1 : 0;
    const int* coefficients = sws_getCoefficients(to_av_space(c.matrix, decoded->height));
    sws_setColorspaceDetails(sws_.get(), coefficients, full, coefficients, full, 0, 1 << 16, 1 << 16);
    r = sws_scale(sws_.get(), decoded->data, decoded->linesize, 0, decoded->height, out->data, out->linesize);
    if (r < 0) throw Error(ExitCode::internal, name_ + ": swscale failed: " + av_error_text(r));
  }
  av_frame_copy_props(out.get(), decoded);
  av_frame_unref(decoded);
  return out;
}

void MediaReader::deliver(MediaItem& item) {
  const AVPixelFormat device_layout = device_frame_layout(decoded_.get());
  const AVPixelFormat decoder_format =
      device_layout != AV_PIX_FMT_NONE ? device_layout : AVPixelFormat(decoded_->format);
  if (!first_frame_seen_ && nvdec_attached_ && device_layout == AV_PIX_FMT_NONE) {
    nvdec_refused_ = true;
    const std::string why = std::string("NVDEC does not take this ") + decoder_->codec->name + " stream (" +
                            av_get_pix_fmt_name(decoder_format) + ", " + std::to_string(decoded_->width) + "x" +
                            std::to_string(decoded_->height) + "; see the decoder's log)";
    if (options_.hwdec == HwDecode::nvdec) throw Error(ExitCode::unavailable, name_ + ": --hwdec nvdec: " + why);
    software_reason_ = why;
    log_info("{}: decoding in software: {}", name_, why);
  }
  const ColorSpec color =
      color_from_tags(decoded_->colorspace, decoded_->color_range, decoder_format, decoded_->height);
  const Size size{decoded_->width, decoded_->height};
  const AVColorPrimaries primaries = decoded_->color_primaries;
  const AVColorTransferCharacteristic transfer = decoded_->color_trc;
  const AVColorSpace space = decoded_->colorspace;
  PixelFormat format;
  item.frame.frame = convert(decoded_.get(), &format);
  item.frame.format = format;
  item.frame.color = color;
  item.frame.input_ready_at = input_ready_at_;
  item.kind = MediaItem::Kind::video;
  if (!first_frame_seen_) {
    first_frame_seen_ = true;
    if (decode_errors_before_first_frame_ > 0)
      log_warning("{}: skipped {} undecodable packets before the first picture", name_,
                  decode_errors_before_first_frame_);
    video_.size = size;
    video_.format = format;
    video_.color = color;
    video_.decoder_format = decoder_format;
    if (primaries != AVCOL_PRI_UNSPECIFIED) video_.primaries = primaries;
    if (transfer != AVCOL_TRC_UNSPECIFIED) video_.transfer = transfer;
    if (space != AVCOL_SPC_UNSPECIFIED) video_.space = space;
  } else if (size != last_size_) {
    log_debug("{}: picture size changes from {}x{} to {}x{} at frame {}", name_, last_size_.width,
              last_size_.height, size.width, size.height, frames_delivered_);
  }
  last_size_ = size;
  ++frames_delivered_;
}

}  // namespace sp
