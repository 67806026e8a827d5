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

// Attaches a CUDA device to the decoder context before it is opened. Returns
// nullopt when attached, else why NVDEC cannot be used for this codec here.
std::optional<std::string> attach_nvdec(AVCodecContext* decoder, const AVCodec* codec);

// The layout of a decoded CUDA picture (NV12, P010, ...); AV_PIX_FMT_NONE for
// a picture in host memory.
AVPixelFormat device_frame_layout(const AVFrame* frame);

}  // namespace sp
