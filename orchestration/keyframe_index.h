#pragma once
// Keyframes from the demuxer's index (MP4/MOV sample tables, Matroska cues,
// NUT's index, ...), each one's presentation time read from its packet: an
// index holds decode times in some demuxers and presentation times in others,
// and in MP4 a keyframe's presentation time is its decode time plus a
// composition offset that FFmpeg does not expose.
#include <cstdint>
#include <optional>
#include <vector>

#include "orchestration/keyframe_input.h"
#include "orchestration/keyframes.h"

namespace sp {

struct IndexedKeyframes {
  std::vector<Keyframe> keyframes;  // in index order
  int64_t frame_count = -1;         // where the index lists every frame
};

// nullopt where the index is missing, lists only some keyframes (Matroska
// without cues, a fragmented MP4, FLV, a raw stream's index of what probing
// read), or disagrees with the packets: the caller then scans packets. Moves
// the read position.
std::optional<IndexedKeyframes> keyframes_from_index(VideoInput& in);

}  // namespace sp
