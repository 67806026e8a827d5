#pragma once
// A worker's video decoder, kept from one input to the next when the next
// stream is described exactly as the last one was (a folder of clips from one
// camera, the segments of one file). A kept decoder is flushed, which is how
// FFmpeg resets a decoder after draining or for a seek, and goes on with its
// threads and parameter sets. What it does not keep is NVDEC's session:
// FFmpeg's H.264 decoder makes it again after a flush, and a kept NVDEC
// decoder's first picture took as long as a new one's (0.25 s with 4 workers
// on an H100, 1 s with 16; docs/perf.md). A batch decodes short clips in
// software for that reason (orchestration/batch.cpp).
//
// keep() may be called on a run's teardown thread while the worker's thread
// waits to take(): the two are serialized.
extern "C" {
#include <libavcodec/avcodec.h>
}

#include <cstdint>
#include <mutex>

#include "codecs/ffmpeg_util.h"

namespace sp {

// What a decoder was opened with, beyond the stream's parameters.
struct DecoderSetup {
  AVRational packet_time_base{0, 1};
  int threads = 0;
  int thread_type = 0;
  int flags = 0;
  int cuda_device = -1;  // NVDEC's device; -1: software
  int extra_hw_frames = 0;
  bool operator==(const DecoderSetup&) const;
};

class KeptDecoder {
 public:
  KeptDecoder() = default;
  ~KeptDecoder();
  KeptDecoder(const KeptDecoder&) = delete;
  KeptDecoder& operator=(const KeptDecoder&) = delete;

  // The kept decoder if it was opened for a stream with exactly these
  // parameters and setup, else null (and the kept one stays).
  CodecContextPtr take(const AVCodecParameters* stream, const DecoderSetup& setup);
  // A decoder that delivered all it was asked for, flushed here; it replaces
  // any kept before.
  void keep(CodecContextPtr decoder, const AVCodecParameters* stream, const DecoderSetup& setup);
  int64_t reuses() const;

 private:
  mutable std::mutex mutex_;
  CodecContextPtr decoder_;
  AVCodecParameters* stream_ = nullptr;
  DecoderSetup setup_;
  int64_t reuses_ = 0;
};

}  // namespace sp
