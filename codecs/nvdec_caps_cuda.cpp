#include "codecs/nvdec_caps.h"

// The driver's functions are loaded at run time: the build needs no driver.
// Quiet loader: a failure becomes our reason, not a line on stderr.
#define FFNV_LOG_FUNC(logctx, msg, ...)
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...)
#include <ffnvcodec/dynlink_loader.h>

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/pixdesc.h>
}

#include <fmt/format.h>

#include <mutex>

namespace sp {
namespace {

std::optional<cudaVideoCodec> cuvid_codec(AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_H264: return cudaVideoCodec_H264;
    case AV_CODEC_ID_HEVC: return cudaVideoCodec_HEVC;
    case AV_CODEC_ID_VP9: return cudaVideoCodec_VP9;
    case AV_CODEC_ID_AV1: return cudaVideoCodec_AV1;
    case AV_CODEC_ID_VP8: return cudaVideoCodec_VP8;
    case AV_CODEC_ID_MPEG1VIDEO: return cudaVideoCodec_MPEG1;
    case AV_CODEC_ID_MPEG2VIDEO: return cudaVideoCodec_MPEG2;
    case AV_CODEC_ID_MPEG4: return cudaVideoCodec_MPEG4;
    case AV_CODEC_ID_VC1: return cudaVideoCodec_VC1;
    case AV_CODEC_ID_MJPEG: return cudaVideoCodec_JPEG;
    default: return std::nullopt;
  }
}

struct ChromaDepth {
  cudaVideoChromaFormat chroma;
  const char* chroma_name;
  int depth;
};

std::optional<ChromaDepth> chroma_depth(AVPixelFormat format) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format);
  if (!d) return std::nullopt;
  const int depth = d->comp[0].depth;
  if (d->nb_components == 1) return ChromaDepth{cudaVideoChromaFormat_Monochrome, "monochrome", depth};
  if (d->log2_chroma_w == 1 && d->log2_chroma_h == 1) return ChromaDepth{cudaVideoChromaFormat_420, "4:2:0", depth};
  if (d->log2_chroma_w == 1 && d->log2_chroma_h == 0) return ChromaDepth{cudaVideoChromaFormat_422, "4:2:2", depth};
  if (d->log2_chroma_w == 0 && d->log2_chroma_h == 0) return ChromaDepth{cudaVideoChromaFormat_444, "4:4:4", depth};
  return std::nullopt;
}

struct DriverFunctions {
  CudaFunctions* cuda = nullptr;
  CuvidFunctions* cuvid = nullptr;
};

// Loaded once and kept for the process (as FFmpeg's own NVDEC does per decoder).
const DriverFunctions& driver() {
  static DriverFunctions f;
  static std::once_flag once;
  std::call_once(once, [] {
    if (cuda_load_functions(&f.cuda, nullptr) < 0) f.cuda = nullptr;
    if (cuvid_load_functions(&f.cuvid, nullptr) < 0) f.cuvid = nullptr;
  });
  return f;
}

}  // namespace

std::optional<std::string> nvdec_capability_refusal(const AVCodecParameters* stream, AVBufferRef* device) {
  const auto codec = cuvid_codec(stream->codec_id);
  const char* name = avcodec_get_name(stream->codec_id);
  if (!codec) return fmt::format("NVDEC does not decode {}", name);
  // Streams that do not name their format are asked about as the common case.
  const auto format = chroma_depth(AVPixelFormat(stream->format))
                          .value_or(ChromaDepth{cudaVideoChromaFormat_420, "4:2:0", 8});
  const DriverFunctions& f = driver();
  if (!f.cuda || !f.cuvid || !f.cuvid->cuvidGetDecoderCaps) return "the NVDEC driver library cannot be loaded";
  auto* hw = static_cast<AVCUDADeviceContext*>(reinterpret_cast<AVHWDeviceContext*>(device->data)->hwctx);
  CUVIDDECODECAPS caps{};
  caps.eCodecType = *codec;
  caps.eChromaFormat = format.chroma;
  caps.nBitDepthMinus8 = unsigned(format.depth - 8);
  CUcontext previous = nullptr;
  if (f.cuda->cuCtxPushCurrent(hw->cuda_ctx) != CUDA_SUCCESS) return "the CUDA context cannot be made current for NVDEC";
  const CUresult asked = f.cuvid->cuvidGetDecoderCaps(&caps);
  f.cuda->cuCtxPopCurrent(&previous);
  if (asked != CUDA_SUCCESS) return fmt::format("the driver does not answer NVDEC queries (error {})", int(asked));
  if (!caps.bIsSupported)
    return fmt::format("this GPU's NVDEC does not decode {} {} {}-bit", name, format.chroma_name, format.depth);
  const unsigned w = unsigned(stream->width), h = unsigned(stream->height);
  if (w == 0 || h == 0) return std::nullopt;
  if (w > caps.nMaxWidth || h > caps.nMaxHeight || (caps.nMaxMBCount > 0 && (w * h) / 256 > caps.nMaxMBCount))
    return fmt::format("{}x{} is above this GPU's NVDEC limit for {} ({}x{}, {} macroblocks)", w, h, name,
                       caps.nMaxWidth, caps.nMaxHeight, caps.nMaxMBCount);
  if (w < caps.nMinWidth || h < caps.nMinHeight)
    return fmt::format("{}x{} is below this GPU's NVDEC minimum for {} ({}x{})", w, h, name, caps.nMinWidth,
                       caps.nMinHeight);
  return std::nullopt;
}

}  // namespace sp
