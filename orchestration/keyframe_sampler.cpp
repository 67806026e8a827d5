#include "orchestration/keyframe_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "pipeline/errors.h"

namespace sp {
namespace {

// Keyframes this close to a place count as on either side of it:
// choose_segments compares times as floating-point seconds, and warm-up
// estimated by time is rounded.
constexpr double kMarginSeconds = 1e-3;
// How far before a place a seek aims: a quarter more than the median gap
// between keyframes seen so far (a GOP and a bit, so that one keyframe is
// likely between there and the place; the longest gap would make every read
// as long as the rarest GOP), or this much before any is known. MPEG-TS
// lands on the packet whose decode time is just before the target, whatever
// its kind; where the first keyframe after it is past the place, the seek is
// tried again four times farther back. Where reading stopped no farther than
// this before a place, it reads on instead.
constexpr double kFirstLeadSeconds = 1;
constexpr double kLeadPerMedianGap = 1.25;
// Reading more than a quarter of the file (or this much, for small ones) is
// no cheaper than reading it all: a demuxer whose seek reads forward.
constexpr int64_t kMinByteBudget = int64_t(64) << 20;
// Places read before their pace foretells the whole (the first pays for
// opening the file again).
constexpr double kPlacesBeforePacing = 8;
// Reads at evenly spread byte positions, to catch a clock that restarts or
// wraps between the places read; each reads up to this many packets for one
// with a decode time.
constexpr int kClockProbes = 32;
constexpr int kProbePackets = 64;

}  // namespace

KeyframeSampler::KeyframeSampler(VideoInput& in, AVRational time_base)
    : in_(in),
      seconds_per_tick_(av_q2d(time_base)),
      packet_(make_packet()),
      byte_budget_(std::max(kMinByteBudget, avio_size(in.format->pb) / 4)),
      bytes_seen_(in.format->pb->bytes_read) {}

void KeyframeSampler::read_first_keyframe() {
  Stretch s;
  if (!read_to_key(s)) throw SamplingAbandoned{"no keyframe with a timestamp"};
  first_pts_ = s.last_pts;
  stretches_.push_back(s);
}

void KeyframeSampler::cover(double seconds) {
  const double low = seconds - kMarginSeconds, high = seconds + kMarginSeconds;
  for (const Stretch& s : stretches_)
    if (s.first <= low && (s.last >= high || s.to_end)) return;
  if (current_ != kNone) {
    Stretch& current = stretches_[current_];
    if (current.first <= low && !current.to_end && current.last >= low - lead()) {
      while (current.last < high && read_to_key(current)) {
      }
      return;
    }
  }
  for (double lead = this->lead();; lead *= 4) {
    Stretch s;
    const bool from_start = low - lead <= seconds_of(first_pts_);
    if (from_start)
      reopen();
    else
      seek(low - lead);
    if (!read_to_key(s)) {
      if (from_start) throw SamplingAbandoned{"the first keyframe is gone on a second read"};
      continue;  // past the last keyframe: farther back
    }
    if (from_start && s.last_pts != first_pts_)
      throw SamplingAbandoned{"a second read from the start gives another first keyframe"};
    if (!from_start) {
      if (s.last > low) continue;  // past the keyframe before the place: farther back
      s.first = s.last;
    }
    while (s.last < high && read_to_key(s)) {
    }
    stretches_.push_back(s);
    current_ = stretches_.size() - 1;
    return;
  }
}

void KeyframeSampler::check_clock_by_bytes() {
  AVFormatContext* format = in_.format.get();
  if (format->iformat->flags & AVFMT_NO_BYTE_SEEK)
    throw SamplingAbandoned{"the clock between the places read cannot be checked"};
  const int64_t size = avio_size(format->pb);
  current_ = kNone;
  for (int i = 1; i < kClockProbes; ++i) {
    const int64_t pos = size / kClockProbes * i;
    const int r = av_seek_frame(format, in_.video->index, pos, AVSEEK_FLAG_BYTE);
    throw_if_interrupted(r);
    if (r < 0) throw SamplingAbandoned{fmt::format("seeking to byte {} failed: {}", pos, av_error_text(r))};
    for (int n = 0; n < kProbePackets && read_video_packet(in_, packet_.get()); ++n) {
      check_budget();
      if (packet_->dts != AV_NOPTS_VALUE && packet_->pos >= 0) {
        probes_.push_back({packet_->pos, packet_->dts});
        break;
      }
    }
  }
}

std::vector<Keyframe> KeyframeSampler::keyframes() const {
  std::vector<FilePoint> points = probes_;
  int64_t last_key_pos = -1;
  for (const auto& [pts, point] : keys_) {
    if (point.pos < 0) continue;
    if (point.pos < last_key_pos)
      throw SamplingAbandoned{fmt::format("the keyframe at {:.3f} s lies before an earlier one", seconds_of(pts))};
    last_key_pos = point.pos;
    points.push_back(point);
  }
  std::sort(points.begin(), points.end(),
            [](const FilePoint& a, const FilePoint& b) { return std::tie(a.pos, a.dts) < std::tie(b.pos, b.dts); });
  for (size_t i = 1; i < points.size(); ++i)
    if (points[i].dts != AV_NOPTS_VALUE && points[i - 1].dts != AV_NOPTS_VALUE && points[i].dts < points[i - 1].dts)
      throw SamplingAbandoned{
          fmt::format("decode times go backwards at byte {} (a clock that restarts)", points[i].pos)};
  std::vector<Keyframe> out;
  out.reserve(keys_.size());
  for (const auto& entry : keys_) out.push_back({entry.first, -1});
  return out;
}

void KeyframeSampler::check_pace(double done, double places) const {
  const double projected = double(bytes_) / done * places;
  if (done >= kPlacesBeforePacing && projected > double(byte_budget_))
    throw SamplingAbandoned{fmt::format("sampling {} places would read about {} MiB, as much as reading every packet",
                                        places, int64_t(projected) >> 20)};
}

std::string KeyframeSampler::summary() const {
  return fmt::format("{} keyframes in {} stretches, {} seeks, {:.1f} MiB read", keys_.size(), stretches_.size(),
                     seeks_, double(bytes_) / (1 << 20));
}

double KeyframeSampler::lead() {
  if (gaps_.empty()) return kFirstLeadSeconds;
  const auto middle = gaps_.begin() + gaps_.size() / 2;
  std::nth_element(gaps_.begin(), middle, gaps_.end());
  return kLeadPerMedianGap * *middle;
}

bool KeyframeSampler::read_to_key(Stretch& s) {
  while (read_video_packet(in_, packet_.get())) {
    check_budget();
    const int64_t pts = presentation_time(packet_.get());
    if (!(packet_->flags & AV_PKT_FLAG_KEY) || pts == AV_NOPTS_VALUE) continue;
    if (s.last != -INFINITY) {
      if (pts <= s.last_pts)
        throw SamplingAbandoned{fmt::format("keyframe times go backwards at {:.3f} s", seconds_of(pts))};
      gaps_.push_back(seconds_of(pts) - s.last);
    }
    s.last = seconds_of(pts);
    s.last_pts = pts;
    const auto [at, added] = keys_.emplace(pts, FilePoint{packet_->pos, packet_->dts});
    if (!added && at->second.pos != packet_->pos)
      throw SamplingAbandoned{fmt::format("two keyframes at {:.3f} s (a clock that restarts)", s.last)};
    return true;
  }
  s.to_end = true;
  return false;
}

void KeyframeSampler::seek(double seconds) {
  ++seeks_;
  current_ = kNone;
  const int64_t target = std::llround(seconds / seconds_per_tick_);
  const int r = av_seek_frame(in_.format.get(), in_.video->index, target, AVSEEK_FLAG_BACKWARD);
  throw_if_interrupted(r);
  if (r < 0) throw SamplingAbandoned{fmt::format("seeking to {:.3f} s failed: {}", seconds, av_error_text(r))};
  check_budget();
}

void KeyframeSampler::reopen() {
  ++seeks_;
  current_ = kNone;
  in_ = open_video_input(in_.path);
  bytes_seen_ = 0;
  check_budget();
}

void KeyframeSampler::throw_if_interrupted(int r) const {
  if (r == AVERROR_EXIT) throw Error(ExitCode::interrupted, in_.path + ": interrupted while seeking");
}

void KeyframeSampler::check_budget() {
  const int64_t read = in_.format->pb->bytes_read;
  bytes_ += read - bytes_seen_;
  bytes_seen_ = read;
  if (bytes_ > byte_budget_)
    throw SamplingAbandoned{fmt::format("sampling read {} MiB, as much as reading every packet would", bytes_ >> 20)};
}

}  // namespace sp
