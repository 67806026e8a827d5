#pragma once
// The element's C++ side, with no GObject in it: the session and chain that the
// properties name, the caps' sizes, and the frames' way through the chain.
// It uses the public API (include/stylepipe/) only.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "stylepipe/chain.h"
#include "stylepipe/session.h"

namespace spgst {

enum class BackendChoice { automatic, cuda, cpu };

struct EngineOptions {
  std::string config_path;    // a YAML file, or
  std::string pipeline_text;  // inline YAML (exactly one of the two)
  BackendChoice backend = BackendChoice::automatic;
  int cuda_device = -1;  // -1: device 0 (or, on CUDA memory, the neighbours' context's device)
};

// What the element reads: 4-byte pixels (the chain itself sees RGBA8 only)
// or YUV 4:2:0 planes, which the chain converts (Chain::run on a YuvImage).
enum class Layout { rgba, bgrx, yuv };

// One input frame, at its own strides: `packed` for rgba and bgrx, `yuv` for yuv.
struct InputFrame {
  Layout layout = Layout::rgba;
  stylepipe::Image packed;
  stylepipe::YuvImage yuv;
};

// `chain` on the frame, RGBA (`packed`) or YUV; BGRx is the caller's to turn into RGBA first.
void run_chain(stylepipe::Chain& chain, const InputFrame& input, const stylepipe::Image& output,
               const stylepipe::RunOptions& options);

// What the element has done, for its `stats` property.
struct EngineStats {
  uint64_t frames = 0;
  uint64_t device_frames = 0;  // of those, read and written in place in CUDA memory
  uint64_t resets = 0;
  uint64_t converted_frames = 0;  // BGRx frames turned into RGBA before the chain (a host copy each)
  uint64_t yuv_frames = 0;        // NV12 or I420 frames, converted by the chain where they are
  uint64_t uploads = 0;           // system memory frames staged to the GPU (CUDA backend)
  uint64_t downloads = 0;         // and back
  uint64_t pinned_frames = 0;     // of those, both in pinned memory: DMA straight between buffers and GPU
};

class HostStaging;  // staging_cuda.cpp: pinned host and device images for system memory on CUDA

class Engine {
 public:
  // Opens the session and reads the config: throws stylepipe::ConfigError
  // (file:line:col), MediaError (an unreadable file), DeviceError (no such
  // device) or Error. Where `automatic` cannot have CUDA, it runs on the CPU
  // and `fallback_reason` says why (the element warns once).
  Engine(const EngineOptions& options, std::string* fallback_reason);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  stylepipe::Backend backend() const { return session_->device().backend; }
  int cuda_device() const { return session_->device().index; }
  std::string device_name() const { return session_->device().to_string(); }
  std::string stage_list() const;  // "pencil, xbr"
  bool temporal() const;

  // The chain's output size for an input size. Asked from any thread (caps
  // queries): answered by a chain of its own on the CPU and cached, so that
  // the streaming chain is never reconfigured (which would restart its
  // temporal stages). Throws stylepipe::Error for sizes the chain refuses.
  stylepipe::Size output_size(stylepipe::Size input);

  // One frame in host memory, rows at their own pitch: straight into the
  // chain on the CPU, staged through pinned memory on CUDA (YUV frames go up
  // as they are: 1.5 bytes a pixel). `output` is RGBA8. Throws stylepipe::Error.
  void run_host(const InputFrame& input, const stylepipe::Image& output, std::optional<double> time_seconds);
  // One frame in device memory of the session's device (RGBA or YUV), queued
  // on `stream` (a cudaStream_t) with no host synchronization. Throws stylepipe::Error.
  void run_device(const InputFrame& input, const stylepipe::Image& output, void* stream,
                  std::optional<double> time_seconds);

  // The next frame is a first frame (a flush, a new segment).
  void reset();
  EngineStats stats() const;

 private:
  stylepipe::Chain make_chain(std::shared_ptr<stylepipe::Session> session) const;
  InputFrame without_bgrx(const InputFrame& input);  // BGRx as RGBA (a host copy); others as they are
  void count(const InputFrame& input, bool on_device, bool staged, bool pinned);

  EngineOptions options_;
  std::shared_ptr<stylepipe::Session> session_;
  std::optional<stylepipe::Chain> chain_;  // the streaming thread's
  std::unique_ptr<HostStaging> staging_;   // CUDA backend on system memory, made at the first frame

  std::vector<uint8_t> converted_;  // BGRx frames as RGBA

  mutable std::mutex sizes_mutex_;
  std::map<std::pair<int, int>, stylepipe::Size> sizes_;

  mutable std::mutex stats_mutex_;
  EngineStats stats_;
};

// The staging of system memory frames through the GPU (CUDA builds).
class HostStaging {
 public:
  explicit HostStaging(int device);
  ~HostStaging();
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  // input (host, RGBA or YUV) -> pinned -> device -> chain -> device ->
  // pinned -> output (host); returns once `output` is written. Pinned input
  // or output is copied by DMA where it is; true where both were.
  bool run(stylepipe::Chain& chain, const InputFrame& input, const stylepipe::Image& output,
           const stylepipe::RunOptions& options);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spgst
