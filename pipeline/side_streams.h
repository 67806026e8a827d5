#pragma once
// Streams of a stage's own beside the frame's stream: work forked onto them
// runs side by side with the frame's stream and is joined back by events, so
// no host thread waits. For CUDA code only (needs the CUDA runtime).
#include <cuda_runtime.h>

#include <vector>

namespace sp {

class SideStreams {
 public:
  // `count` non-blocking streams and their events, on the current device.
  explicit SideStreams(int count);
  // Waits for what the streams still hold; no throw (a destructor's path),
  // and on the device they were made on, whichever is current.
  ~SideStreams();
  SideStreams(const SideStreams&) = delete;
  SideStreams& operator=(const SideStreams&) = delete;

  // Every side stream's next work comes after what `main` holds so far.
  void fork_from(cudaStream_t main);
  cudaStream_t stream(int k) const { return streams_[size_t(k)]; }
  // `main`'s next work comes after what side stream `k` holds so far.
  void join_into(int k, cudaStream_t main);

 private:
  void release() noexcept;

  int device_ = 0;
  cudaEvent_t forked_ = nullptr;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> done_;
};

}  // namespace sp
