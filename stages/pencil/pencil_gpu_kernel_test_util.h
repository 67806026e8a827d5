#pragma once
// Shared by the pencil GPU kernel tests: device copies of host vectors, and the
// CUDA classify and draw kernels against the CPU implementation's direct
// convolutions on the same gradients (bit-exact classes, strokes and range).
#include <gtest/gtest.h>

#include <vector>

#include "pipeline/cuda_check.h"
#include "stages/pencil/pencil_cpu.h"
#include "stages/pencil/pencil_cuda.h"

namespace sp::pencil::gpu_test {

template <class T>
struct DeviceCopy {
  T* ptr = nullptr;
  size_t n = 0;
  explicit DeviceCopy(const std::vector<T>& host) : n(host.size()) {
    SP_CUDA_CHECK(cudaMalloc(&ptr, n * sizeof(T) + 16));
    SP_CUDA_CHECK(cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { cudaFree(ptr); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    SP_CUDA_CHECK(cudaMemcpy(h.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// classify with plan p1 (of kernels k1) and draw with plan p2 (of k2) on the
// GPU, from the CPU's classes, against cpu::classify and cpu::draw.
inline void expect_stroke_kernels_match_cpu(const std::vector<uint16_t>& grad, int w, int h, const LineKernelSet& k1,
                                            const LineKernelSet& k2, const StrokePlan& p1, const StrokePlan& p2) {
  const size_t n = size_t(w) * h;
  std::vector<uint16_t> cls(n);
  std::vector<uint32_t> sp(n);
  uint32_t range[2];
  cpu::RowScratch rows;
  rows.resize(4, w);
  cpu::classify(grad.data(), w, h, k1, cls.data(), rows);
  cpu::draw(cls.data(), w, h, k2, sp.data(), range, rows);

  DeviceCopy<uint32_t> w1(p1.words), w2(p2.words), drange(std::vector<uint32_t>(2, 0));
  DeviceCopy<uint16_t> dgrad(grad), dcls(std::vector<uint16_t>(n, 0xFFFF)), dcls_cpu(cls);
  DeviceCopy<uint32_t> dsp(std::vector<uint32_t>(n, 0xA5A5A5A5u));
  gpu::DeviceStrokePlan g1 = gpu::device_plan_view(p1, w1.ptr), g2 = gpu::device_plan_view(p2, w2.ptr);
  gpu::prepare_stroke_plan(g1, false);
  gpu::prepare_stroke_plan(g2, true);
  gpu::launch_classify(dgrad.ptr, w, h, g1, dcls.ptr, nullptr);
  gpu::launch_draw(dcls_cpu.ptr, w, h, g2, dsp.ptr, drange.ptr, nullptr);  // the CPU's classes
  SP_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(dcls.download(), cls);
  EXPECT_EQ(dsp.download(), sp);
  const std::vector<uint32_t> rg = drange.download();
  EXPECT_EQ(~rg[0], range[0]);
  EXPECT_EQ(rg[1], range[1]);
}

}  // namespace sp::pencil::gpu_test
