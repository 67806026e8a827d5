#include "orchestration/keyframes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "orchestration/keyframe_index.h"
#include "orchestration/keyframe_input.h"
#include "orchestration/keyframe_sample.h"
#include "pipeline/environment.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {
namespace {

struct PacketScan {
  std::vector<Keyframe> keyframes;
  int64_t frame_count = 0;
  int64_t first_pts = AV_NOPTS_VALUE;
  int64_t end_pts = AV_NOPTS_VALUE;  // the latest packet's pts plus its duration
};

// Every video packet's header, none decoded. Packets the container marks as
// discarded (before an edit list's start) are decoded but never shown: they
// count as frames before a keyframe, not in the frame count.
PacketScan keyframes_from_packets(VideoInput& in) {
  PacketScan scan;
  PacketPtr packet = make_packet();
  int64_t decoded = 0;
  while (read_video_packet(in, packet.get())) {
    const int64_t pts = presentation_time(packet.get());
    if (pts != AV_NOPTS_VALUE) {
      if (scan.first_pts == AV_NOPTS_VALUE || pts < scan.first_pts) scan.first_pts = pts;
      const int64_t end = pts + std::max<int64_t>(packet->duration, 0);
      if (scan.end_pts == AV_NOPTS_VALUE || end > scan.end_pts) scan.end_pts = end;
      if (packet->flags & AV_PKT_FLAG_KEY) scan.keyframes.push_back({pts, decoded});
    }
    ++decoded;
    if (!(packet->flags & AV_PKT_FLAG_DISCARD)) ++scan.frame_count;
  }
  if (decoded == 0) throw Error(ExitCode::data_error, in.path + ": the video stream has no packets");
  return scan;
}

// What the container says; the caller fills in from the scan what it does not.
struct StreamFacts {
  bool start_known = false;
  bool rate_known = false;
};

StreamFacts describe_stream(VideoInput& in, KeyframeScan& scan) {
  StreamFacts facts;
  AVFormatContext* format = in.format.get();
  AVStream* stream = in.video;
  scan.video_stream = stream->index;
  scan.time_base = stream->time_base;
  const AVRational rate = av_guess_frame_rate(format, stream, nullptr);
  facts.rate_known = rate.num > 0 && rate.den > 0;
  if (facts.rate_known) scan.frame_rate = rate;
  facts.start_known = format->start_time != AV_NOPTS_VALUE || stream->start_time != AV_NOPTS_VALUE;
  if (format->start_time != AV_NOPTS_VALUE)
    scan.start_seconds = double(format->start_time) / AV_TIME_BASE;
  else if (stream->start_time != AV_NOPTS_VALUE)
    scan.start_seconds = double(stream->start_time) * av_q2d(stream->time_base);
  if (format->duration != AV_NOPTS_VALUE && format->duration > 0)
    scan.duration_seconds = double(format->duration) / AV_TIME_BASE;
  else if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0)
    scan.duration_seconds = double(stream->duration) * av_q2d(stream->time_base);
  return facts;
}

// A time range is a segment only where times increase through the file.
void require_increasing(const std::string& path, const KeyframeScan& scan) {
  for (size_t i = 1; i < scan.keyframes.size(); ++i)
    if (scan.keyframes[i].pts <= scan.keyframes[i - 1].pts)
      throw Error(ExitCode::data_error,
                  fmt::format("{}: keyframe times go backwards ({:.3f} s after {:.3f} s): a stream whose timestamps "
                              "restart cannot be split by time",
                              path, double(scan.keyframes[i].pts) * av_q2d(scan.time_base),
                              double(scan.keyframes[i - 1].pts) * av_q2d(scan.time_base)));
}

// Sampling needs what choose_segments computes targets from as a full scan
// would find it, and seeks; it pays where reading through takes long.
bool worth_sampling(const VideoInput& in, const KeyframeScan& scan, const StreamFacts& facts) {
  const AVIOContext* pb = in.format->pb;
  if (!pb || !(pb->seekable & AVIO_SEEKABLE_NORMAL)) return false;
  const int64_t size = avio_size(in.format->pb);
  if (size < 0 || size < sampled_scan_min_bytes()) return false;
  if (facts.start_known && facts.rate_known && scan.duration_seconds > 0) return true;
  log_info("{}: the container gives no {}; reading every packet for keyframes", in.path,
           !facts.start_known ? "start time" : !facts.rate_known ? "frame rate" : "duration");
  return false;
}

std::optional<std::vector<Keyframe>> sample_if_worth_it(VideoInput& in, const KeyframeScan& scan,
                                                        const StreamFacts& facts,
                                                        const std::function<CutRequest(const KeyframeScan&)>& request) {
  if (!request || !worth_sampling(in, scan, facts)) return std::nullopt;
  in = open_video_input(in.path);  // from the start again: reading the index moved it
  return sample_keyframes(in, scan, request(scan));
}

}  // namespace

int64_t sampled_scan_min_bytes() {
  // Reading 64 MiB of packet headers takes about a tenth of a second.
  constexpr int64_t kDefault = int64_t(64) << 20;
  return integer_from_environment("SP_SAMPLED_SCAN_MIN_BYTES", 0, INT64_MAX, "a number of bytes").value_or(kDefault);
}

KeyframeScan scan_keyframes(const std::string& path) { return scan_keyframes_for(path, nullptr); }

KeyframeScan scan_keyframes_for(const std::string& path,
                                const std::function<CutRequest(const KeyframeScan&)>& request) {
  VideoInput in = open_video_input(path);
  KeyframeScan scan;
  const StreamFacts facts = describe_stream(in, scan);
  if (std::optional<IndexedKeyframes> indexed = keyframes_from_index(in)) {
    scan.keyframes = std::move(indexed->keyframes);
    scan.frame_count = indexed->frame_count;
    scan.source = "index";
  } else if (std::optional<std::vector<Keyframe>> sampled = sample_if_worth_it(in, scan, facts, request)) {
    scan.keyframes = std::move(*sampled);
    scan.source = "sampled";
  } else {
    in = open_video_input(path);  // from the start again: reading the index moved it
    PacketScan packets = keyframes_from_packets(in);
    scan.keyframes = std::move(packets.keyframes);
    scan.frame_count = packets.frame_count;
    scan.source = "packets";
    const double seconds = av_q2d(scan.time_base);
    if (!facts.start_known && packets.first_pts != AV_NOPTS_VALUE)
      scan.start_seconds = double(packets.first_pts) * seconds;
    if (scan.duration_seconds < 0 && packets.end_pts != AV_NOPTS_VALUE)
      scan.duration_seconds = double(packets.end_pts) * seconds - scan.start_seconds;
  }
  require_increasing(path, scan);
  if (!facts.start_known && scan.source == "index" && !scan.keyframes.empty())
    scan.start_seconds = double(scan.keyframes.front().pts) * av_q2d(scan.time_base);
  if (!facts.rate_known && scan.frame_count > 0 && scan.duration_seconds > 0)
    scan.frame_rate = av_d2q(double(scan.frame_count) / scan.duration_seconds, 100000);
  log_debug("{}: {} keyframes ({}), {} frames, {:.3f} s", path, scan.keyframes.size(), scan.source,
            scan.frame_count, scan.duration_seconds);
  return scan;
}

}  // namespace sp
