#include "codecs/nvdec.h"

extern "C" {
#include <libavutil/hwcontext.h>
}

#include "codecs/ffmpeg_util.h"
#include "codecs/nvdec_caps.h"

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

const AVCodec* nvdec_capable_decoder(AVCodecID id) {
  void* it = nullptr;
  // FFmpeg's own decoders with the NVDEC hwaccel, not the *_cuvid wrappers
  // (which bring their own parser and surface handling).
  while (const AVCodec* c = av_codec_iterate(&it))
    if (c->id == id && av_codec_is_decoder(c) && !(c->capabilities & AV_CODEC_CAP_HARDWARE) && has_cuda_config(c))
      return c;
  return nullptr;
}

NvdecChoice choose_nvdec(const AVCodecParameters* stream) {
  NvdecChoice choice;
  const AVCodec* decoder = nvdec_capable_decoder(stream->codec_id);
  if (!decoder) {
    choice.refusal = std::string("FFmpeg has no NVDEC path for ") + avcodec_get_name(stream->codec_id);
    return choice;
  }
  const int r = create_shared_cuda_device(&choice.device);
  if (r < 0) {
    choice.refusal = "no usable CUDA device for NVDEC (" + av_error_text(r) + ")";
    return choice;
  }
  if (auto why = nvdec_capability_refusal(stream, choice.device)) {
    av_buffer_unref(&choice.device);
    choice.refusal = *why;
    return choice;
  }
  choice.decoder = decoder;
  return choice;
}

AVPixelFormat device_frame_layout(const AVFrame* frame) {
  if (frame->format != AV_PIX_FMT_CUDA || !frame->hw_frames_ctx) return AV_PIX_FMT_NONE;
  return reinterpret_cast<const AVHWFramesContext*>(frame->hw_frames_ctx->data)->sw_format;
}

}  // namespace sp
