#pragma once
// What this GPU's NVDEC decodes, asked of the driver (cuvidGetDecoderCaps)
// before a decoder is opened, so that --hwdec auto can say why it decodes
// in software, and a hardware-only decoder is never picked for a stream the
// GPU cannot take.
extern "C" {
#include <libavcodec/avcodec.h>
}

#include <optional>
#include <string>

namespace sp {

// nullopt when NVDEC takes the stream (or the stream does not say enough to
// ask); else why not: the codec at this chroma format and bit depth, or the
// size. `device` is a CUDA device context (AVHWDeviceContext).
std::optional<std::string> nvdec_capability_refusal(const AVCodecParameters* stream, AVBufferRef* device);

}  // namespace sp
