#pragma once
// The element's side of GStreamer's CUDA library (libgstcuda-1.0, 1.22's
// plugins-bad): `video/x-raw(memory:CUDAMemory)` frames read and written in
// place by the chain on the CUDA backend.
//
// The chain runs on the primary CUDA context of its device (the runtime's, as
// every stylepipe session), and a context's memory is not another's. So the
// element wraps that primary context in a GstCudaContext when it goes to
// READY, before its upstream neighbours look for one, and shares it: it
// answers their CONTEXT queries and posts it (HAVE_CONTEXT) for the bin to
// hand out. Upstream then decodes into the CUDA buffer pool the element
// proposes; the element's output comes from a pool of the same context.
// Frames of another context still work, staged through host memory, with a
// warning (cuda_memory_gstcuda.cpp; cuda_memory_none.cpp where the build has
// no CUDA or no gstreamer-cuda-1.0).
#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>
#include <string>

namespace spgst {

inline constexpr const char* kCudaMemoryFeature = "memory:CUDAMemory";

// Whether this build has the CUDA memory path.
bool cuda_memory_built();

class CudaMemory {
 public:
  // The GstCudaContext of `device`'s primary context, and a stream for the
  // chain. Throws stylepipe::DeviceError where libgstcuda or the device fails.
  CudaMemory(GstElement* element, int device);
  ~CudaMemory();
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;

  // Posts the context for the bin (and the application) to share.
  void post_context();
  // A CONTEXT query for gst.cuda.context: answered with ours (true).
  bool answer_context_query(GstQuery* query);
  // Logs a context handed in (set_context): a different one is not adopted.
  void note_context(GstContext* context);

  // ALLOCATION: the pool upstream should decode into, and the pool of the output.
  bool propose_pool(GstQuery* query, GstCaps* caps);
  bool decide_pool(GstQuery* query, GstCaps* caps);

  // Whether every memory of the buffer is CUDA memory of our context.
  bool is_ours(GstBuffer* buffer) const;
  // Before the chain reads `buffer` on its own stream: from 1.24, a CUDA
  // element may push memory whose stream is still writing it (1.22 finishes
  // first); waits for that work.
  void wait_for_writers(GstBuffer* buffer) const;
  // Flags that map CUDA memory as device pointers (GST_MAP_CUDA).
  static GstMapFlags device_map(GstMapFlags flags);

  void* stream() const;  // a cudaStream_t of the device
  // Waits for the work queued on stream(): 1.22's contract is that a pushed
  // buffer is ready (there is no GstCudaStream to hand on before 1.24).
  void finish();
  std::string describe() const;  // "GstCudaContext of cuda:0 (primary context 0x...)"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spgst
