#pragma once
// NUT's stream header keeps a video stream's codec, size and aspect ratio but
// not its colour tags, chroma siting, field order, profile and the like: a
// reader gets those from decoding, which guesses where the bitstream is silent
// (FFV1 says nothing about colour; H.264 decoders assume left chroma siting).
// A NUT output therefore carries the encoder's values in one stream tag, and
// whoever copies the stream into another container puts them back, so the
// copy is tagged as a direct encode into that container would be.
extern "C" {
#include <libavcodec/codec_par.h>
#include <libavutil/dict.h>
#include <libavutil/rational.h>
}

#include <cstdint>

namespace sp {

inline constexpr const char* kVideoParametersTag = "stylepipe_video_parameters";

void tag_video_parameters(const AVCodecParameters& parameters, AVDictionary** stream_metadata);
// Sets what the tag holds; false (nothing changed) when there is none.
// Throws sp::Error(data_error) for a tag it cannot read.
bool restore_video_parameters(const AVDictionary* stream_metadata, AVCodecParameters* parameters);

// NUT stores presentation times only, and its muxer moves every stream later
// when a decode time is negative, as those of the first reordered frames are.
// A writer that keeps B-frames in NUT moves every timestamp later by a
// constant itself and says by how much in this tag (seconds, as a fraction),
// so that a reader can take it back exactly.
inline constexpr const char* kTimestampOffsetTag = "stylepipe_timestamp_offset";

void tag_timestamp_offset(AVRational seconds, AVDictionary** stream_metadata);
// The tagged offset in ticks of `time_base`; 0 without a tag. Throws
// sp::Error(data_error) for a tag it cannot read, a negative offset or one
// that is no whole number of ticks.
int64_t tagged_timestamp_offset(const AVDictionary* stream_metadata, AVRational time_base);

}  // namespace sp
