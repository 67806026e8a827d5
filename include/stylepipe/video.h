#pragma once
// Video frame by frame: a reader that decodes into RGBA8 images in the
// session's memory (NVDEC straight into device memory on CUDA), and a writer
// that encodes RGBA8 images. For a whole file through a chain, transcode()
// (transcode.h) is faster: it overlaps decoding, the chain and encoding.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stylepipe/chain.h"
#include "stylepipe/session.h"

namespace stylepipe {

struct VideoInfo {
  int width = 0;
  int height = 0;
  double frame_rate = 0;               // average frames per second
  double duration_seconds = -1;        // < 0: unknown
  int64_t frame_count_estimate = -1;   // < 0: unknown
  std::string codec;                   // the decoder
};

// One decoded picture. Its buffer is its own while the frame lives (a pooled
// buffer, reused only once the last reference is gone).
struct VideoFrame {
  Image image;
  int64_t index = 0;            // 0-based, in presentation order
  double time_seconds = 0;      // from the input's start
  double duration_seconds = 0;
  // CUDA: the stream its conversion was queued on. Work on another stream
  // must wait for it (order_streams, streams.h); on this stream it is in order.
  void* cuda_stream = nullptr;
};

class VideoReader {
 public:
  // hwdec: "auto" (NVDEC where the session is CUDA and the GPU decodes the
  // codec; why not is said once), "nvdec" (or fail), "none". Throws
  // MediaError for a file that cannot be opened or has no video.
  VideoReader(const std::string& path, std::shared_ptr<Session> session, const std::string& hwdec = "auto");
  ~VideoReader();
  VideoReader(const VideoReader&) = delete;
  VideoReader& operator=(const VideoReader&) = delete;

  const VideoInfo& info() const;
  bool hardware_decoding() const;
  // The next frame, or null at the end. On CUDA its conversion is queued on
  // `cuda_stream` (null: the legacy default stream), and nothing waits for it.
  std::shared_ptr<VideoFrame> next(void* cuda_stream = nullptr);

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct VideoWriterOptions {
  std::string codec;          // an FFmpeg encoder; empty: the container's choice
  std::string format;         // an FFmpeg muxer; empty: from the file's extension
  std::string preset = "medium";
  std::string pixel_format;   // empty: the encoder's choice
  int crf = 18;
  bool overwrite = false;
};

class VideoWriter {
 public:
  // A video of `width` x `height` at `frame_rate`.
  VideoWriter(const std::string& path, int width, int height, double frame_rate, std::shared_ptr<Session> session,
              const VideoWriterOptions& options = {});
  // Like `reader`'s video: its size, rate, time base and colour tags.
  VideoWriter(const std::string& path, const VideoReader& like, std::shared_ptr<Session> session,
              const VideoWriterOptions& options = {});
  ~VideoWriter();  // closes, if close() was not called
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  // Encodes `image` (the writer's size) shown at `time_seconds` for
  // `duration_seconds` (default: one frame at the rate). On CUDA the image is
  // device memory, read in `cuda_stream`'s order; the call returns once it is read.
  void write(const Image& image, double time_seconds, void* cuda_stream = nullptr,
             std::optional<double> duration_seconds = std::nullopt);
  // Flushes the encoder and finishes the file (written under a temporary name until then).
  void close();

  struct Impl;  // the implementation's side (api/video.cpp); not for callers

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace stylepipe
