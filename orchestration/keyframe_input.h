#pragma once
// The demuxer side of the keyframe scan, shared by the index reader and the
// packet scan: an opened input whose streams other than the video one are
// discarded, so reading touches video packets only.
#include <memory>
#include <string>

#include "codecs/ffmpeg_util.h"

namespace sp {

struct FormatContextCloser {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
using FormatContextPtr = std::unique_ptr<AVFormatContext, FormatContextCloser>;

struct VideoInput {
  std::string path;
  FormatContextPtr format;
  AVStream* video = nullptr;
};

// Opens and probes `path` and picks the video stream the reader would.
// Throws sp::Error naming the file: no_input where it cannot be opened,
// data_error where it is not media or has no video stream, interrupted.
VideoInput open_video_input(const std::string& path);

// The next packet of the video stream; false at the end of the file. Throws
// sp::Error(data_error) on a read error, interrupted on Ctrl-C.
bool read_video_packet(VideoInput& in, AVPacket* packet);

// Where the demuxer gives no presentation time (AVI, raw streams) the decode
// time stands in for it, as FFmpeg's decoders do.
inline int64_t presentation_time(const AVPacket* p) { return p->pts != AV_NOPTS_VALUE ? p->pts : p->dts; }

}  // namespace sp
