#include "orchestration/keyframe_index.h"

#include <algorithm>
#include <numeric>

#include "pipeline/log.h"

namespace sp {
namespace {

// Gaps between listed keyframes read through to prove that no keyframe is
// missing from a keyframes-only index; the widest are where one would hide.
constexpr size_t kGapsChecked = 3;
// Keyframes read to learn whether the index holds presentation times.
constexpr size_t kTimeSamples = 16;
// Up to this far apart in the file the next keyframe is reached by reading on
// rather than by a seek, which in MP4 walks the sample tables from the start
// (all of them: a 2-hour file's keyframes every 2 s cost a second of seeks).
constexpr int64_t kReadOnBytes = 1 << 20;

struct KeyEntry {
  AVIndexEntry entry;
  int64_t position = 0;  // among all index entries: decode order where the index lists every frame
};

// A copy: reading packets may add entries and move the index in memory.
std::vector<AVIndexEntry> copy_index(AVStream* stream) {
  std::vector<AVIndexEntry> entries;
  const int count = avformat_index_get_entries_count(stream);
  entries.reserve(size_t(std::max(count, 0)));
  for (int i = 0; i < count; ++i) entries.push_back(*avformat_index_get_entry(stream, i));
  return entries;
}

// Index timestamps are decode times in some demuxers (MP4/MOV, FLV, AVI) and
// presentation times in others (Matroska, NUT): a key packet is the entry's
// when either matches.
bool is_entry_packet(const AVPacket* p, const AVIndexEntry& e) {
  return (p->flags & AV_PKT_FLAG_KEY) && (p->dts == e.timestamp || p->pts == e.timestamp);
}

// Both of the packet's times are later than the entry's: it is decoded after
// the entry's keyframe, which was therefore skipped.
bool is_past_entry(const AVPacket* p, const AVIndexEntry& e) {
  int64_t earliest = p->pts;
  if (p->dts != AV_NOPTS_VALUE && (earliest == AV_NOPTS_VALUE || p->dts < earliest)) earliest = p->dts;
  return earliest != AV_NOPTS_VALUE && earliest > e.timestamp;
}

class IndexReader {
 public:
  IndexReader(VideoInput& in, std::vector<KeyEntry> keys)
      : in_(in), keys_(std::move(keys)), pts_(keys_.size()), packet_(make_packet()) {}

  size_t size() const { return keys_.size(); }
  const KeyEntry& key(size_t i) const { return keys_[i]; }
  int64_t packets_read() const { return packets_read_; }

  // Key entry i's presentation time, or nullopt where the demuxer does not
  // deliver its packet. Leaves the demuxer just past that packet.
  std::optional<int64_t> read_key(size_t i) {
    for (const int64_t target : seek_targets(i)) {
      const int r = av_seek_frame(in_.format.get(), in_.video->index, target, AVSEEK_FLAG_BACKWARD);
      if (r < 0) {
        log_debug("{}: seeking to {} in the index failed: {}", in_.path, target, av_error_text(r));
        continue;
      }
      while (read_video_packet(in_, packet_.get())) {
        ++packets_read_;
        if (is_entry_packet(packet_.get(), keys_[i].entry)) return found(i);
        if (is_past_entry(packet_.get(), keys_[i].entry)) break;
      }
    }
    just_read_ = kNone;
    return std::nullopt;
  }

  // After read_key(i): whether the next key packet is entry i + 1's, or the
  // file ends after the last entry, so the index misses no keyframe there.
  bool next_key_is_listed(size_t i) {
    just_read_ = kNone;
    while (read_video_packet(in_, packet_.get())) {
      ++packets_read_;
      if (!(packet_->flags & AV_PKT_FLAG_KEY)) continue;
      if (i + 1 < keys_.size() && is_entry_packet(packet_.get(), keys_[i + 1].entry)) {
        found(i + 1);
        return true;
      }
      unlisted_keyframe_seen_ = true;
      return false;
    }
    return i + 1 == keys_.size();
  }

  std::optional<int64_t> pts(size_t i) {
    if (!pts_[i] && i > 0 && just_read_ == i - 1 && near(i - 1, i)) next_key_is_listed(i - 1);
    return pts_[i] ? pts_[i] : read_key(i);
  }

  // A key packet turned up between two listed keyframes.
  bool unlisted_keyframe_seen() const { return unlisted_keyframe_seen_; }

 private:
  // Just before the next listed keyframe first: a backward seek lands on
  // entry i whichever time the index holds. The entry's own time would land
  // a keyframe early in MP4, whose demuxer takes the target as a
  // presentation time, later than a keyframe's decode time. The last entry
  // has no next one, and a target past the index makes FFmpeg's generic seek
  // read on to it; its own time costs a group of pictures at most.
  std::vector<int64_t> seek_targets(size_t i) const {
    std::vector<int64_t> targets;
    if (i + 1 < keys_.size()) targets.push_back(keys_[i + 1].entry.timestamp - 1);
    targets.push_back(keys_[i].entry.timestamp);
    if (i > 0) targets.push_back(keys_[i - 1].entry.timestamp);
    return targets;
  }

  std::optional<int64_t> found(size_t i) {
    just_read_ = i;
    return pts_[i] = presentation_time(packet_.get());
  }

  bool near(size_t a, size_t b) const {
    const int64_t from = keys_[a].entry.pos, to = keys_[b].entry.pos;
    return from >= 0 && to >= from && to - from <= kReadOnBytes;
  }

  static constexpr size_t kNone = size_t(-1);
  VideoInput& in_;
  std::vector<KeyEntry> keys_;
  std::vector<std::optional<int64_t>> pts_;
  PacketPtr packet_;
  size_t just_read_ = kNone;  // the key entry whose packet the demuxer has just delivered
  bool unlisted_keyframe_seen_ = false;
  int64_t packets_read_ = 0;
};

// A keyframes-only index may list only some (cues once per cluster, what
// probing happened to read): the tail and the widest gaps are read through.
bool lists_every_keyframe(IndexReader& reader) {
  std::vector<size_t> order(reader.size() - 1);
  std::iota(order.begin(), order.end(), size_t(0));
  const auto gap = [&](size_t i) { return reader.key(i + 1).entry.timestamp - reader.key(i).entry.timestamp; };
  const size_t gaps = std::min(kGapsChecked, order.size());
  std::partial_sort(order.begin(), order.begin() + gaps, order.end(),
                    [&](size_t a, size_t b) { return gap(a) > gap(b); });
  order.resize(gaps);
  order.push_back(reader.size() - 1);
  for (const size_t i : order)
    if (!reader.read_key(i) || !reader.next_key_is_listed(i)) return false;
  return true;
}

// Matroska and NUT index presentation times, MP4 and FLV decode times, which
// in MP4 without B-frames are the same. Where a spread of keyframes read from
// their packets all show the index's own time, the others are taken from the
// index unread: reading each costs a seek (in MP4 one that walks the sample
// tables) and a keyframe's worth of data.
bool index_holds_presentation_times(IndexReader& reader) {
  const size_t n = reader.size();
  const size_t samples = std::min(n, kTimeSamples);
  for (size_t s = 0; s < samples; ++s) {
    const size_t i = samples == 1 ? 0 : s * (n - 1) / (samples - 1);
    const std::optional<int64_t> pts = reader.pts(i);
    if (!pts || *pts != reader.key(i).entry.timestamp) return false;
  }
  return true;
}

}  // namespace

std::optional<IndexedKeyframes> keyframes_from_index(VideoInput& in) {
  AVStream* stream = in.video;
  std::vector<AVIndexEntry> entries = copy_index(stream);
  if (entries.empty()) return std::nullopt;
  const bool lists_every_frame =
      stream->nb_frames > 0 && int64_t(entries.size()) >= stream->nb_frames &&
      std::any_of(entries.begin(), entries.end(), [](const AVIndexEntry& e) { return !(e.flags & AVINDEX_KEYFRAME); });
  if (!lists_every_frame) {
    // Matroska reads its cues on the first seek.
    const int r = av_seek_frame(in.format.get(), stream->index, entries.front().timestamp, AVSEEK_FLAG_BACKWARD);
    if (r < 0) return std::nullopt;
    entries = copy_index(stream);
  }

  std::vector<KeyEntry> keys;
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].flags & AVINDEX_KEYFRAME) keys.push_back({entries[i], int64_t(i)});
  if (keys.empty()) return std::nullopt;
  IndexReader reader(in, std::move(keys));
  if (!lists_every_frame && !lists_every_keyframe(reader)) {
    log_debug("{}: the index lists only some keyframes; scanning packets", in.path);
    return std::nullopt;
  }

  IndexedKeyframes out;
  const bool index_times_are_pts = index_holds_presentation_times(reader);
  for (size_t i = 0; i < reader.size(); ++i) {
    const std::optional<int64_t> pts = index_times_are_pts ? reader.key(i).entry.timestamp : reader.pts(i);
    if (!pts || reader.unlisted_keyframe_seen()) {
      log_debug("{}: keyframe {} of the index is not where the index says; scanning packets", in.path, i);
      return std::nullopt;
    }
    out.keyframes.push_back({*pts, lists_every_frame ? reader.key(i).position : -1});
  }
  if (lists_every_frame)
    out.frame_count = std::count_if(entries.begin(), entries.end(),
                                    [](const AVIndexEntry& e) { return !(e.flags & AVINDEX_DISCARD_FRAME); });
  else if (stream->nb_frames > 0)
    out.frame_count = stream->nb_frames;
  log_debug("{}: {} keyframes from the index ({} times), {} packets read", in.path, out.keyframes.size(),
            index_times_are_pts ? "presentation" : "decode", reader.packets_read());
  return out;
}

}  // namespace sp
