#pragma once
// CUDA builds only: a frame's device work as a replayed CUDA graph.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "pipeline/image.h"

namespace sp {

// A small frame costs the host more to launch than the GPU to run: xbr at
// 256x240 is ~13 us of launches (three kernels and their arguments) for a
// few us of kernels, so frames in flight on several streams cannot overlap
// and one stream's frames stall between kernels. Where a frame's work depends
// on nothing but its buffers (no temporal stage, every stage replayable()),
// the work captured once for a set of buffers is replayed as one graph
// launch (~1.5 us of host time). Buffers come from pools and per-slot
// storage, so the sets repeat; where they do not (more sets than
// `capacity`), the graphs are dropped and the work runs launch by launch.
class FrameGraphs {
 public:
  using Key = std::vector<uintptr_t>;
  explicit FrameGraphs(size_t capacity = 96);
  ~FrameGraphs();
  FrameGraphs(const FrameGraphs&) = delete;
  FrameGraphs& operator=(const FrameGraphs&) = delete;

  // Enqueues `work` on `stream`: the graph captured for `key` (captured now
  // on its first use), or `work` itself once graphs are off. `work` enqueues
  // on `stream` only and never synchronizes the host.
  void run(const Key& key, cudaStream_t stream, const std::function<void()>& work);
  // Buffers or stages changed: the graphs refer to the old ones.
  void clear();
  // SP_FRAME_GRAPHS=0 turns graphs off (to compare, or to rule them out).
  bool enabled() const { return enabled_; }
  uint64_t captured() const { return captured_; }
  uint64_t replayed() const { return replayed_; }
  // Captures another thread invalidated (its call synchronized the device):
  // those frames ran launch by launch.
  uint64_t invalidated() const { return invalidated_; }

 private:
  void run_uncaptured_after_invalidation(const std::function<void()>& work);
  size_t capacity_;
  bool enabled_;
  std::map<Key, cudaGraphExec_t> graphs_;
  uint64_t captured_ = 0, replayed_ = 0, invalidated_ = 0;
};

// The parts of a picture a replayed graph depends on, for its key.
void append_key(FrameGraphs::Key& key, const PlanarView& v);

// cudaEventRecord that also works inside a stream capture: there it adds an
// event node, so the event is recorded each time the graph runs (a plain
// record would only order the capture and never be recorded).
void record_event(cudaEvent_t event, cudaStream_t stream);

}  // namespace sp
