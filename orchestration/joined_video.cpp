#include "orchestration/joined_video.h"

#include <fmt/format.h>

#include <algorithm>

#include "codecs/h264_in_mp4.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {

SegmentReadAhead::SegmentReadAhead(std::unique_ptr<SegmentFile> file, std::optional<SegmentFrameCheck> check,
                                   bool length_prefixed)
    : file_(std::move(file)),
      check_(std::move(check)),
      length_prefixed_(length_prefixed),
      reader_([this] { read_all(); }) {}

SegmentReadAhead::~SegmentReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  file_->stop_waiting();  // a join that fails does not wait for a writer to finish
  reader_.join();
}

void SegmentReadAhead::read_all() {
  try {
    for (;;) {
      PacketPtr packet = make_packet();
      const bool got = file_->read(packet.get());
      if (check_) {
        if (got) check_->add(*packet);
        else check_->finish();
      }
      if (got && length_prefixed_) annex_b_to_length_prefixed(packet.get());
      std::unique_lock lock(mutex_);
      if (!got) break;
      changed_.wait(lock, [&] { return stop_ || bytes_ < kBytes; });
      if (stop_) return;
      bytes_ += size_t(packet->size);
      packets_.push_back(std::move(packet));
      lock.unlock();
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  changed_.notify_all();
}

bool SegmentReadAhead::next(AVPacket* packet) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !packets_.empty() || done_; });
  if (packets_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return false;
  }
  av_packet_move_ref(packet, packets_.front().get());
  packets_.pop_front();
  bytes_ -= size_t(packet->size);
  lock.unlock();
  changed_.notify_all();
  return true;
}

JoinedVideo::JoinedVideo(Segments segments, AVRational segment_time_base, int reorder_delay,
                         AVRational output_time_base, SegmentChecker* checker, bool length_prefixed)
    : segments_(std::move(segments)),
      checker_(checker),
      length_prefixed_(length_prefixed),
      segment_time_base_(segment_time_base),
      time_base_(output_time_base),
      reorder_delay_(std::max(reorder_delay, 0)),
      decode_times_(reorder_delay_) {
  read_ahead();
}

JoinedVideo::~JoinedVideo() = default;

bool JoinedVideo::read(AVPacket* packet) {
  for (;;) {
    if (!file_) {
      const std::optional<SegmentToJoin> s = segments_(next_segment_++);
      if (!s) return false;
      std::unique_ptr<SegmentFile> file = s->open();
      names_.push_back(file->name());
      log_debug("joining {}", file->name());
      std::optional<SegmentFrameCheck> check;
      if (checker_) {
        checker_->check_header(*file, s->index);
        check.emplace(checker_->frame_check(*file, *s));
      }
      file_ = std::make_unique<SegmentReadAhead>(std::move(file), std::move(check), length_prefixed_);
    }
    if (file_->next(packet)) break;
    log_debug("joined {}", file_->file().name());
    file_.reset();
  }
  if (packet->pts == AV_NOPTS_VALUE)
    throw Error(ExitCode::data_error, fmt::format("{} has a frame without a timestamp", file_->file().name()));
  av_packet_rescale_ts(packet, file_->file().video().time_base, segment_time_base_);
  const int64_t duration = std::max<int64_t>(av_rescale_q(packet->duration, segment_time_base_, time_base_), 0);
  end_ = std::max(end_, av_rescale_q(packet->pts, segment_time_base_, time_base_) + duration);
  return true;
}

// Up to the next packet's decode time and reorder delay + 1 packets after
// it, so that the last ones are known as such.
void JoinedVideo::read_ahead() {
  while (!segments_done_ && (ahead_.size() < size_t(reorder_delay_) + 2 || !decode_times_.ready())) {
    PacketPtr packet = make_packet();
    if (!read(packet.get())) {
      segments_done_ = true;
      decode_times_.finish();
      return;
    }
    decode_times_.add(packet->pts);
    ahead_.push_back({std::move(packet), names_.size() - 1});
  }
}

bool JoinedVideo::next(AVPacket* packet) {
  read_ahead();
  if (ahead_.empty()) return false;
  const size_t segment = ahead_.front().segment;
  av_packet_move_ref(packet, ahead_.front().packet.get());
  ahead_.pop_front();
  packet->dts = decode_times_.take();
  av_packet_rescale_ts(packet, segment_time_base_, time_base_);
  // A coarser output clock (Matroska's ms) may round two decode times into one.
  if (last_dts_ != AV_NOPTS_VALUE && packet->dts <= last_dts_) packet->dts = last_dts_ + 1;
  if (packet->dts > packet->pts)
    throw Error(ExitCode::data_error,
                fmt::format("{}: a frame is shown before it can be decoded (pts {}, dts {}): it reorders frames "
                            "deeper than its stream says ({})",
                            names_[segment], packet->pts, packet->dts, reorder_delay_));
  last_dts_ = packet->dts;
  return true;
}

}  // namespace sp
