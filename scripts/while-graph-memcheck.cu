// A conditional while graph built as halftone builds its warm iterations
// (capture to graph, a conditional node, a captured body), on its own: does
// compute-sanitizer memcheck run it? Variants add a cuFFT plan and a CUB sort
// to the body. Build and run on a GPU machine:
//   nvcc -arch=sm_90 -std=c++17 -o while-graph-memcheck scripts/while-graph-memcheck.cu -lcufft
//   ./while-graph-memcheck [fft|sort|fft+sort]; compute-sanitizer --tool memcheck ./while-graph-memcheck
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cufft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)
#define FK(x) do { cufftResult r_ = (x); if (r_ != CUFFT_SUCCESS) { std::printf("%s:%d %s: cufft %d\n", __FILE__, __LINE__, #x, int(r_)); std::exit(1); } } while (0)

__global__ void open_loop(const int* n, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, *n > 0); }
__global__ void add_one(float* d, int len) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < len) d[i] += 1.f;
}
__global__ void decide(int* n, cudaGraphConditionalHandle h) {
  *n -= 1;
  cudaGraphSetConditional(h, *n > 0);
}

int main(int argc, char** argv) {
  const bool fft = argc > 1 && std::strstr(argv[1], "fft");
  const bool sort = argc > 1 && std::strstr(argv[1], "sort");
  const int len = 1 << 16, iterations = 10, launches = 5;
  cudaStream_t stream, capture;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  float* d; int* n; cufftComplex* spectrum; unsigned* keys[2]; size_t temp_bytes = 0; void* temp = nullptr;
  CK(cudaMalloc(&d, len * sizeof(float)));
  CK(cudaMemset(d, 0, len * sizeof(float)));
  CK(cudaMalloc(&n, sizeof(int)));
  CK(cudaMalloc(&spectrum, 256 * 256 * sizeof(cufftComplex)));
  CK(cudaMemset(spectrum, 0, 256 * 256 * sizeof(cufftComplex)));
  for (auto& k : keys) { CK(cudaMalloc(&k, len * sizeof(unsigned))); CK(cudaMemset(k, 0, len * sizeof(unsigned))); }
  CK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys[0], keys[1], len, 0, 32, capture));
  CK(cudaMalloc(&temp, temp_bytes));
  cufftHandle plan;
  FK(cufftPlan2d(&plan, 256, 256, CUFFT_C2C));
  FK(cufftSetStream(plan, capture));

  cudaGraph_t graph;
  CK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle loop = 0;
  CK(cudaGraphConditionalHandleCreate(&loop, graph, 0, cudaGraphCondAssignDefault));
  CK(cudaStreamBeginCaptureToGraph(capture, graph, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  open_loop<<<1, 1, 0, capture>>>(n, loop);
  CK(cudaGetLastError());
  cudaGraph_t captured;
  CK(cudaStreamEndCapture(capture, &captured));
  size_t roots = 1; cudaGraphNode_t first;
  CK(cudaGraphGetRootNodes(graph, &first, &roots));
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = loop;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  cudaGraphNode_t node;
  CK(cudaGraphAddNode(&node, graph, &first, nullptr, 1, &params));
  cudaGraph_t body = params.conditional.phGraph_out[0];
  CK(cudaStreamBeginCaptureToGraph(capture, body, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  add_one<<<(len + 255) / 256, 256, 0, capture>>>(d, len);
  if (fft) FK(cufftExecC2C(plan, spectrum, spectrum, CUFFT_FORWARD));
  if (sort) CK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys[0], keys[1], len, 0, 32, capture));
  decide<<<1, 1, 0, capture>>>(n, loop);
  CK(cudaStreamEndCapture(capture, &captured));
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int l = 0; l < launches; ++l) {
    CK(cudaMemcpyAsync(n, &iterations, sizeof(int), cudaMemcpyHostToDevice, stream));
    CK(cudaGraphLaunch(exec, stream));
  }
  CK(cudaStreamSynchronize(stream));
  std::vector<float> h(len);
  CK(cudaMemcpy(h.data(), d, len * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (float v : h) wrong += v != float(iterations * launches);
  std::printf("while graph (%s%s): %s, d[0] = %.0f (expected %d)\n", fft ? "fft " : "", sort ? "sort" : "",
              wrong ? "WRONG" : "ok", h[0], iterations * launches);
  return wrong ? 2 : 0;
}
