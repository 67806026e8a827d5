#pragma once
// Small shared pieces of the FFmpeg glue: error text, owning pointers, the
// mapping between FFmpeg's pixel formats / colour tags and sp's, and the
// capture of FFmpeg's own log lines (forwarded to sp's log at debug level,
// and remembered per context so a failure message can say what FFmpeg said).
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/image.h"

namespace sp {

// av_err2str for C++ (the macro takes the address of a temporary).
std::string av_error_text(int errnum);

struct AVFrameDeleter {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct AVPacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct AVCodecContextDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct AVBufferRefDeleter {
  void operator()(AVBufferRef* b) const { av_buffer_unref(&b); }
};
struct SwsContextDeleter {
  void operator()(SwsContext* c) const { sws_freeContext(c); }
};
using FramePtr = std::unique_ptr<AVFrame, AVFrameDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, AVPacketDeleter>;
using CodecContextPtr = std::unique_ptr<AVCodecContext, AVCodecContextDeleter>;
using SwsPtr = std::unique_ptr<SwsContext, SwsContextDeleter>;
using BufferRefPtr = std::unique_ptr<AVBufferRef, AVBufferRefDeleter>;

FramePtr make_frame();
PacketPtr make_packet();

// The same codec setup data (avcC/hvcC parameter sets) byte for byte.
bool same_extradata(const AVCodecParameters& a, const AVCodecParameters& b);

// sp format -> the FFmpeg format with the same memory layout.
AVPixelFormat to_av(PixelFormat format);
// FFmpeg format -> sp format with the same layout, if any (yuvj* map to their
// non-j twins: the range travels in ColorSpec).
std::optional<PixelFormat> from_av_exact(AVPixelFormat format);
// The sp format that keeps the most of `format` (depth, chroma, alpha) when it
// has no exact twin: what the reader converts to with swscale.
PixelFormat nearest_supported(AVPixelFormat format);
// yuvj420p & co.: full range implied by the format itself.
bool is_jpeg_range_format(AVPixelFormat format);
bool is_rgb(PixelFormat format);
// A parseable sp name ("rgba", "yuv420p", ...), or nullopt.
std::optional<PixelFormat> parse_pixel_format_name(const std::string& name);

// Colour tags. Unspecified matrix: BT.601 up to 576 lines (and for JPEG-style
// full-range YUV), BT.709 above. Unspecified range: full for RGB, gray and
// yuvj*, limited for other YUV.
ColorSpec color_from_tags(AVColorSpace space, AVColorRange range, AVPixelFormat decoded_format, int height);
AVColorSpace to_av_space(ColorMatrix matrix, int height);
AVColorRange to_av_range(ColorRange range);
std::optional<ColorMatrix> matrix_from_av(AVColorSpace space);
const char* to_string(ColorMatrix matrix);
const char* to_string(ColorRange range);

// An FFmpeg log line without its "[context @ 0x...] " prefix.
std::string strip_log_prefix(const std::string& line);

// Opens FFmpeg's CUDA device on the CUDA runtime's primary context (one
// context for our kernels, NVDEC and NVENC: pictures need no copies between
// contexts), of the calling thread's device (current_cuda_device). Returns
// FFmpeg's error code.
int create_shared_cuda_device(AVBufferRef** device);

// Grows the kernel buffer of `fd` to `bytes` (as far as the system allows)
// when it is a pipe; anything else is left alone.
void grow_pipe(int fd, size_t bytes);

// Installs (once) the FFmpeg log callback. Safe to call from any thread.
void install_ffmpeg_log();

// Remembers the FFmpeg log lines at error level (or worse) from the given
// contexts (an AVFormatContext, an AVCodecContext) while it lives. A codec
// context whose `opaque` points at itself is also heard through the copies
// its frame threads log with.
class FfmpegLogWatch {
 public:
  FfmpegLogWatch();
  ~FfmpegLogWatch();
  FfmpegLogWatch(const FfmpegLogWatch&) = delete;
  FfmpegLogWatch& operator=(const FfmpegLogWatch&) = delete;

  void watch(const void* context);
  // Error lines recorded since the last take, oldest first.
  std::vector<std::string> take_errors();
  // The latest error line ever recorded ("" when none), e.g. to append to a
  // failure message.
  std::string last_error() const;

  // For the log callback.
  void record(const std::string& line);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sp
