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
}

namespace sp {

inline constexpr const char* kVideoParametersTag = "stylepipe_video_parameters";

void tag_video_parameters(const AVCodecParameters& parameters, AVDictionary** stream_metadata);
// Sets what the tag holds; false (nothing changed) when there is none.
// Throws sp::Error(data_error) for a tag it cannot read.
bool restore_video_parameters(const AVDictionary* stream_metadata, AVCodecParameters* parameters);

}  // namespace sp
