#pragma once
// A batch worker's frame engines, kept from one clip to the next: building
// and configuring a stage chain is a clip's start-up cost (pencil's configure
// takes ~0.12 s on a GPU), paid once per worker instead of once per clip.
// One cache serves runs of the same stages and settings on one thread's
// device (a batch worker's clips); not thread-safe.
#include <array>
#include <memory>

#include "codecs/kept_decoder.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/frame_engine.h"

namespace sp {

class EngineCache {
 public:
  // The engines' buffers come from here, so it outlives every run that uses
  // the cache, and their encoders' pictures.
  BufferPool& pool() { return pool_; }
  // The worker's decoder, kept for its next clip of the same kind.
  KeptDecoder& decoder() { return decoder_; }

  // The kept engine of this backend, ready for a new video (its temporal
  // stages start again); null when there is none.
  std::unique_ptr<FrameEngine> take(Backend backend) {
    std::unique_ptr<FrameEngine> engine = std::move(slot(backend));
    if (engine) engine->begin_new_video();
    return engine;
  }
  // An idle engine of the cache's stages, for the next run.
  void keep(std::unique_ptr<FrameEngine> engine) { slot(engine->backend()) = std::move(engine); }

 private:
  // (Declared first: destroyed after the engines that hold its buffers.)
  BufferPool pool_;
  // One per backend: a run that starts on the CPU while the GPU starts keeps both.
  std::array<std::unique_ptr<FrameEngine>, 2> engines_;
  std::unique_ptr<FrameEngine>& slot(Backend backend) { return engines_[backend == Backend::cuda ? 1 : 0]; }
  // (Declared last: NVDEC's session goes first, while the context is up.)
  KeptDecoder decoder_;
};

}  // namespace sp
