#include "pipeline/side_streams.h"

#include <algorithm>

#include "pipeline/cuda_check.h"

namespace sp {

SideStreams::SideStreams(int count) : streams_(size_t(count), nullptr), done_(size_t(count), nullptr) {
  try {
    SP_CUDA_CHECK(cudaGetDevice(&device_));
    SP_CUDA_CHECK(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming));
    for (int k = 0; k < count; ++k) {
      SP_CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[size_t(k)], cudaStreamNonBlocking));
      SP_CUDA_CHECK(cudaEventCreateWithFlags(&done_[size_t(k)], cudaEventDisableTiming));
    }
  } catch (...) {
    release();  // what was made before the failure
    throw;
  }
}

SideStreams::~SideStreams() { release(); }

void SideStreams::release() noexcept {
  int current = 0;
  cudaGetDevice(&current);
  cudaSetDevice(device_);
  for (size_t k = 0; k < streams_.size(); ++k) {
    if (streams_[k]) cudaStreamSynchronize(streams_[k]), cudaStreamDestroy(streams_[k]);
    if (done_[k]) cudaEventDestroy(done_[k]);
  }
  if (forked_) cudaEventDestroy(forked_);
  std::fill(streams_.begin(), streams_.end(), nullptr);
  std::fill(done_.begin(), done_.end(), nullptr);
  forked_ = nullptr;
  cudaSetDevice(current);
}

void SideStreams::fork_from(cudaStream_t main) {
  SP_CUDA_CHECK(cudaEventRecord(forked_, main));
  for (cudaStream_t s : streams_) SP_CUDA_CHECK(cudaStreamWaitEvent(s, forked_, 0));
}

void SideStreams::join_into(int k, cudaStream_t main) {
  SP_CUDA_CHECK(cudaEventRecord(done_[size_t(k)], streams_[size_t(k)]));
  SP_CUDA_CHECK(cudaStreamWaitEvent(main, done_[size_t(k)], 0));
}

}  // namespace sp
