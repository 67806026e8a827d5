#pragma once
// Helpers of the lowpoly tests: stages made from the parameter table, clips
// run through one configured stage on either backend, flicker.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "codecs/media_reader.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/convert.h"
#include "stages/lowpoly/lowpoly.h"
#include "tests/support/test_support.h"

#if STYLEPIPE_HAS_CUDA
#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"
#endif

namespace sp::lowpoly::testing {

using test::HostImage;
using Values = std::vector<std::pair<std::string, ParamValue>>;  // parameter name -> value

inline std::unique_ptr<LowpolyStage> make_stage(const Values& values = {}) {
  const StageDescriptor d = make_lowpoly_descriptor();
  Params p = default_params(d.params);
  for (const auto& [k, v] : values) {
    p.set(k, v);
    p.mark_given(k);
  }
  if (auto problem = d.validate(p)) throw std::runtime_error(*problem);
  return std::unique_ptr<LowpolyStage>(static_cast<LowpolyStage*>(d.create(p).release()));
}

// When the clip's frames are shown: frame i at (first + i) * frame_seconds
// (the default shows every frame at 0, so the temporal refresh never comes).
struct ClipClock {
  int64_t first = 0;
  double frame_seconds = 0;
  FrameInfo at(size_t i) const { return {first + int64_t(i), double(first + int64_t(i)) * frame_seconds}; }
};

struct ClipResult {
  std::vector<HostImage> frames;
  std::vector<std::vector<Triangle>> meshes;
};

inline ClipResult run_clip_cpu(LowpolyStage& stage, const std::vector<HostImage>& clip, ClipClock clock = {}) {
  BufferPool pool;
  PooledScratch scratch(pool, MemoryKind::host);
  const Size size{clip[0].width, clip[0].height};
  stage.configure(size, Backend::cpu, scratch);
  ClipResult r;
  for (size_t i = 0; i < clip.size(); ++i) {
    HostImage out(size.width, size.height);
    std::memset(out.pixels.data(), 0xA5, out.pixels.size());
    stage.process_cpu(clip[i].view(), out.view(), clock.at(i));
    r.frames.push_back(std::move(out));
    r.meshes.push_back(stage.mesh());
  }
  return r;
}

#if STYLEPIPE_HAS_CUDA
// `after_frame` sees the stage after each frame, while its device buffers still exist.
inline ClipResult run_clip_cuda(LowpolyStage& stage, const std::vector<HostImage>& clip,
                                const std::function<void(const LowpolyStage&)>& after_frame = {},
                                ClipClock clock = {}) {
  BufferPool pool;
  PooledScratch scratch(pool, MemoryKind::device);
  const Size size{clip[0].width, clip[0].height};
  stage.configure(size, Backend::cuda, scratch);
  cudaStream_t stream;
  SP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t bytes = clip[0].pixels.size();
  uint8_t *din = nullptr, *dout = nullptr;
  SP_CUDA_CHECK(cudaMalloc(&din, bytes));
  SP_CUDA_CHECK(cudaMalloc(&dout, bytes));
  ClipResult r;
  for (size_t i = 0; i < clip.size(); ++i) {
    SP_CUDA_CHECK(cudaMemcpyAsync(din, clip[i].pixels.data(), bytes, cudaMemcpyHostToDevice, stream));
    SP_CUDA_CHECK(cudaMemsetAsync(dout, 0xA5, bytes, stream));
    const size_t pitch = size_t(size.width) * 4;
    stage.process_cuda({din, size.width, size.height, pitch}, {dout, size.width, size.height, pitch},
                       clock.at(i), stream);
    HostImage out(size.width, size.height);
    SP_CUDA_CHECK(cudaMemcpyAsync(out.pixels.data(), dout, bytes, cudaMemcpyDeviceToHost, stream));
    SP_CUDA_CHECK(cudaStreamSynchronize(stream));
    r.frames.push_back(std::move(out));
    r.meshes.push_back(stage.mesh());
    if (after_frame) after_frame(stage);
  }
  cudaFree(din);
  cudaFree(dout);
  cudaStreamDestroy(stream);
  return r;
}
#endif

// A window of `w` x `h` sliding right by `step` pixels per frame over a larger photo.
inline std::vector<HostImage> panning_clip(int w, int h, int frames, int step, std::mt19937_64& rng) {
  const HostImage big = test::synthetic_photo(w + frames * step, h, rng);
  std::vector<HostImage> clip;
  for (int f = 0; f < frames; ++f) {
    HostImage img(w, h);
    for (int y = 0; y < h; ++y)
      std::memcpy(&img.pixels[size_t(y) * w * 4], &big.pixels[(size_t(y) * big.width + f * step) * 4], size_t(w) * 4);
    clip.push_back(std::move(img));
  }
  return clip;
}

// The real photograph in this folder's example sheet (its top-left 480 x 320
// quadrant; danielbuechele on Flickr, CC BY 2.0), decoded by FFmpeg.
inline HostImage example_photo() {
  std::string path = __FILE__;
  path = path.substr(0, path.find_last_of('/')) + "/examples/examples_china.jpg";
  InputOptions options;
  options.url = path;
  MediaReader reader(options);
  MediaItem item;
  while (reader.next(item))
    if (item.kind == MediaItem::Kind::video) break;
  if (item.kind != MediaItem::Kind::video) throw std::runtime_error("no picture in " + path);
  const Size size = item.frame.size();
  HostImage sheet(size.width, size.height);
  convert_to_rgba_cpu(item.frame.view(), item.frame.color, sheet.view());
  HostImage photo(480, 320);
  for (int y = 0; y < photo.height; ++y)
    std::memcpy(&photo.pixels[size_t(y) * photo.width * 4], &sheet.pixels[size_t(y) * sheet.width * 4],
                size_t(photo.width) * 4);
  return photo;
}

// Mean absolute difference between consecutive frames, over all bytes.
inline double flicker(const std::vector<HostImage>& frames) {
  double sum = 0;
  size_t n = 0;
  for (size_t f = 1; f < frames.size(); ++f)
    for (size_t i = 0; i < frames[f].pixels.size(); ++i, ++n)
      sum += std::abs(int(frames[f].pixels[i]) - int(frames[f - 1].pixels[i]));
  return n ? sum / n : 0;
}

}  // namespace sp::lowpoly::testing
