// FrameGraphs (frame_graphs.h).
#include "pipeline/frame_graphs.h"

#include <cstdlib>
#include <cstring>

#include "pipeline/cuda_check.h"
#include "pipeline/log.h"

namespace sp {

FrameGraphs::FrameGraphs(size_t capacity) : capacity_(capacity) {
  const char* setting = std::getenv("SP_FRAME_GRAPHS");
  enabled_ = !(setting && std::strcmp(setting, "0") == 0);
}

FrameGraphs::~FrameGraphs() { clear(); }

void FrameGraphs::clear() {
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
  graphs_.clear();
}

void FrameGraphs::run(const Key& key, cudaStream_t stream, const std::function<void()>& work) {
  if (!enabled_) {
    work();
    return;
  }
  auto found = graphs_.find(key);
  if (found == graphs_.end()) {
    if (graphs_.size() >= capacity_) {
      log_debug("frame graphs: more than {} buffer sets, so frames run launch by launch from here", capacity_);
      clear();
      enabled_ = false;
      work();
      return;
    }
    // Thread-local: another thread's unrelated CUDA calls (a decoder, an
    // encoder) neither break the capture nor join it. But one that
    // synchronizes the device (cudaFree, cudaDeviceSynchronize: another
    // worker's teardown on the same GPU) invalidates it; nothing captured has
    // run then, so this frame runs launch by launch and a later one captures.
    SP_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      work();
    } catch (...) {
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      cudaStreamIsCapturing(stream, &status);
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      if (status != cudaStreamCaptureStatusInvalidated) throw;
      run_uncaptured_after_invalidation(work);
      return;
    }
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    if (ended == cudaErrorStreamCaptureInvalidated) {
      if (graph) cudaGraphDestroy(graph);
      run_uncaptured_after_invalidation(work);
      return;
    }
    SP_CUDA_CHECK(ended);
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    SP_CUDA_CHECK(made);
    found = graphs_.emplace(key, exec).first;
    ++captured_;
  } else {
    ++replayed_;
  }
  SP_CUDA_CHECK(cudaGraphLaunch(found->second, stream));
}

void FrameGraphs::run_uncaptured_after_invalidation(const std::function<void()>& work) {
  cudaGetLastError();  // the invalidation, reported to this thread: not this frame's error
  ++invalidated_;
  log_debug("frame graphs: another thread's CUDA call broke a capture; this frame runs launch by launch");
  work();
}

void append_key(FrameGraphs::Key& key, const PlanarView& v) {
  key.insert(key.end(), {uintptr_t(v.format), uintptr_t(v.width), uintptr_t(v.height)});
  for (int i = 0; i < 3; ++i) key.insert(key.end(), {reinterpret_cast<uintptr_t>(v.plane[i]), v.pitch[i]});
}

void record_event(cudaEvent_t event, cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  SP_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  SP_CUDA_CHECK(cudaEventRecordWithFlags(
      event, stream, status == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : cudaEventRecordDefault));
}

}  // namespace sp
