#pragma once
// H.264 as MP4, MOV and Matroska store it: each NAL unit after its length
// in 4 bytes, with an avcC record for the stream. Encoders write Annex B
// (start codes), which FFmpeg's muxers convert packet by packet on the
// thread that writes; a concat converts on its read-ahead thread instead
// (38% of a concat's time was that scan, docs/perf.md session 34), and
// gives the muxer packets it writes as they are.
extern "C" {
#include <libavcodec/avcodec.h>
}

#include <cstdint>
#include <vector>

namespace sp {

// H.264 whose extradata is Annex B (SPS and PPS after start codes).
bool is_annex_b_h264(const AVCodecParameters& parameters);

// The avcC record FFmpeg's MP4 muxer makes of this Annex B stream: one
// sample muxed into memory and its stream read back by FFmpeg's demuxer, so
// that the record is FFmpeg's, byte for byte. Throws sp::Error where FFmpeg
// fails.
std::vector<uint8_t> avcc_record(const AVCodecParameters& annex_b);

// The packet's NAL units, each after its length in 4 bytes, in place: the
// bytes FFmpeg's MP4 muxer writes for it (a NAL unit ends where the next
// start code begins, less one zero before it; zeros before a start code
// belong to no NAL unit). Keeps timestamps, flags and side data.
void annex_b_to_length_prefixed(AVPacket* packet);

}  // namespace sp
