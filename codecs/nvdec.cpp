#include "codecs/nvdec.h"

extern "C" {
#include <libavutil/hwcontext.h>
}

#include "codecs/ffmpeg_util.h"

namespace sp {

std::optional<HwDecode> parse_hwdec(const std::string& text) {
  if (text == "auto") return HwDecode::automatic;
  if (text == "nvdec") return HwDecode::nvdec;
  if (text == "none") return HwDecode::none;
  return std::nullopt;
}

const char* to_string(HwDecode mode) {
  switch (mode) {
    case HwDecode::automatic: return "auto";
    case HwDecode::nvdec: return "nvdec";
    case HwDecode::none: return "none";
  }
  return "?";
}

static bool has_cuda_config(const AVCodec* codec) {
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* config = avcodec_get_hw_config(codec, i);
    if (!config) return false;
    if (config->device_type == AV_HWDEVICE_TYPE_CUDA && (config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX))
      return true;
  }
}

std::optional<std::string> attach_nvdec(AVCodecContext* decoder, const AVCodec* codec) {
  if (!has_cuda_config(codec)) return std::string("FFmpeg has no NVDEC path for ") + codec->name;
  AVBufferRef* device = nullptr;
  const int r = create_shared_cuda_device(&device);
  if (r < 0) return "no usable CUDA device for NVDEC (" + av_error_text(r) + ")";
  decoder->hw_device_ctx = device;  // the decoder owns the reference now
  // FFmpeg's default get_format picks the CUDA format, and falls back to
  // software by itself when NVDEC rejects the stream (profile, depth, size).
  return std::nullopt;
}

AVPixelFormat device_frame_layout(const AVFrame* frame) {
  if (frame->format != AV_PIX_FMT_CUDA || !frame->hw_frames_ctx) return AV_PIX_FMT_NONE;
  return reinterpret_cast<const AVHWFramesContext*>(frame->hw_frames_ctx->data)->sw_format;
}

}  // namespace sp
