#pragma once
// NVDEC through FFmpeg's CUDA hwaccel: decoded pictures stay in device memory
// (NV12 or P010 surfaces on the CUDA primary context, which the runtime API
// shares), so the conversion kernels read them in place.
extern "C" {
#include <libavcodec/avcodec.h>
}

#include <optional>
#include <string>

namespace sp {

// --hwdec: `automatic` uses NVDEC where it can and says why not otherwise;
// `nvdec` fails (exit 69) where it cannot; `none` decodes in software.
enum class HwDecode { automatic, nvdec, none };
std::optional<HwDecode> parse_hwdec(const std::string& text);
const char* to_string(HwDecode mode);

// The decoder NVDEC runs a stream with, and the CUDA device to attach to it;
// or, with no decoder, why NVDEC cannot take the stream: this FFmpeg has no
// NVDEC path for the codec, there is no usable device, or this GPU's NVDEC
// does not decode the codec at its chroma format and bit depth, or not at its
// size (asked of the driver before anything is opened).
struct NvdecChoice {
  const AVCodec* decoder = nullptr;
  AVBufferRef* device = nullptr;  // the caller owns it
  std::string refusal;
};
NvdecChoice choose_nvdec(const AVCodecParameters* stream);

// The first decoder of `id` with an NVDEC path (FFmpeg's default decoder may
// be a software-only one, as libdav1d is for AV1); nullptr when none has.
const AVCodec* nvdec_capable_decoder(AVCodecID id);

// The layout of a decoded CUDA picture (NV12, P010, ...); AV_PIX_FMT_NONE for
// a picture in host memory.
AVPixelFormat device_frame_layout(const AVFrame* frame);

}  // namespace sp
