#pragma once
// Keyframes of a file without an index, read only around the places a cut
// request looks at (see scan_keyframes_for): each place is reached by a seek
// (MPEG-TS and MPEG-PS seek by a binary search on timestamps) and read on
// from a keyframe before it to the first one past it.
#include <optional>
#include <vector>

#include "orchestration/keyframe_input.h"
#include "orchestration/keyframes.h"

namespace sp {

// `facts` holds the file's start, duration, frame rate and time base.
// nullopt, with the reason logged, where the result cannot be trusted: the
// caller reads every packet. Moves the read position. Throws sp::Error as
// read_video_packet does.
std::optional<std::vector<Keyframe>> sample_keyframes(VideoInput& in, const KeyframeScan& facts,
                                                      const CutRequest& request);

}  // namespace sp
