// What a process pays for the GPU before any work, and for NVDEC sessions:
// cuInit, the primary context, then SESSIONS H.264 1080p decoders made at
// once from that many threads (spread over the GPUs), then destroyed. Each
// step's time, and each session's, are printed; the process's wall time
// (measured outside, by nvdec-sessions.sh) adds the driver's teardown at exit.
// Built on the GPU machine against the Video Codec SDK's loader headers.
// Usage: nvdec-sessions SESSIONS [SURFACES]
#include <ffnvcodec/dynlink_loader.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point kStart = Clock::now();

double since_start() { return std::chrono::duration<double>(Clock::now() - kStart).count(); }

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: CUresult %d\n", what, int(r));
    std::exit(1);
  }
}

CUVIDDECODECREATEINFO h264_1080p(int surfaces) {
  CUVIDDECODECREATEINFO info{};
  info.CodecType = cudaVideoCodec_H264;
  info.ChromaFormat = cudaVideoChromaFormat_420;
  info.OutputFormat = cudaVideoSurfaceFormat_NV12;
  info.bitDepthMinus8 = 0;
  info.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;
  info.ulWidth = info.ulMaxWidth = info.ulTargetWidth = 1920;
  info.ulHeight = info.ulMaxHeight = info.ulTargetHeight = 1088;
  info.ulNumDecodeSurfaces = surfaces;  // FFmpeg: the stream's DPB, plus what the caller holds
  info.ulNumOutputSurfaces = 1;
  info.ulCreationFlags = cudaVideoCreate_PreferCUVID;  // as FFmpeg's NVDEC hwaccel asks
  return info;
}

}  // namespace

int main(int argc, char** argv) {
  const int sessions = argc > 1 ? std::atoi(argv[1]) : 1;
  const int surfaces = argc > 2 ? std::atoi(argv[2]) : 20;
  CudaFunctions* cu = nullptr;
  CuvidFunctions* cuvid = nullptr;
  if (cuda_load_functions(&cu, nullptr) < 0 || cuvid_load_functions(&cuvid, nullptr) < 0) {
    std::fprintf(stderr, "cannot load libcuda or libnvcuvid\n");
    return 1;
  }
  std::printf("libraries loaded      %.3f s\n", since_start());
  check(cu->cuInit(0), "cuInit");
  int gpus = 0;
  check(cu->cuDeviceGetCount(&gpus), "cuDeviceGetCount");
  std::printf("cuInit (%d GPUs)       %.3f s\n", gpus, since_start());
  std::vector<CUcontext> contexts(static_cast<size_t>(gpus));
  for (int g = 0; g < gpus && g < std::max(sessions, 1); ++g) {
    CUdevice device;
    check(cu->cuDeviceGet(&device, g), "cuDeviceGet");
    check(cu->cuDevicePrimaryCtxRetain(&contexts[size_t(g)], device), "cuDevicePrimaryCtxRetain");
    check(cu->cuCtxPushCurrent(contexts[size_t(g)]), "cuCtxPushCurrent");
    CUdeviceptr warm;
    check(cu->cuMemAlloc(&warm, 1 << 20), "cuMemAlloc");  // the context is made on first use
    check(cu->cuMemFree(warm), "cuMemFree");
    CUcontext popped;
    check(cu->cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
  std::printf("contexts made         %.3f s\n", since_start());
  if (sessions == 0) return 0;

  std::vector<double> create_ms(static_cast<size_t>(sessions)), destroy_ms(static_cast<size_t>(sessions));
  std::vector<CUvideodecoder> decoders(static_cast<size_t>(sessions));
  std::barrier sync(sessions);
  std::vector<std::thread> threads;
  for (int s = 0; s < sessions; ++s)
    threads.emplace_back([&, s] {
      check(cu->cuCtxPushCurrent(contexts[size_t(s % gpus)]), "cuCtxPushCurrent");
      CUVIDDECODECREATEINFO info = h264_1080p(surfaces);
      sync.arrive_and_wait();
      auto t0 = Clock::now();
      check(cuvid->cuvidCreateDecoder(&decoders[size_t(s)], &info), "cuvidCreateDecoder");
      create_ms[size_t(s)] = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      sync.arrive_and_wait();
      t0 = Clock::now();
      check(cuvid->cuvidDestroyDecoder(decoders[size_t(s)]), "cuvidDestroyDecoder");
      destroy_ms[size_t(s)] = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    });
  for (std::thread& t : threads) t.join();
  std::sort(create_ms.begin(), create_ms.end());
  std::sort(destroy_ms.begin(), destroy_ms.end());
  std::printf("%d sessions (%d surfaces) made and destroyed   %.3f s\n", sessions, surfaces, since_start());
  std::printf("  create ms: first %.1f, median %.1f, last %.1f\n", create_ms.front(), create_ms[create_ms.size() / 2],
              create_ms.back());
  std::printf("  destroy ms: first %.1f, median %.1f, last %.1f\n", destroy_ms.front(),
              destroy_ms[destroy_ms.size() / 2], destroy_ms.back());
  return 0;
}
