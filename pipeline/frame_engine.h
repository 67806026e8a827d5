#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/buffer_pool.h"
#include "pipeline/image.h"
#include "pipeline/stage_chain.h"

namespace sp {

// The decoder-side and encoder-side picture formats the engine converts between.
struct EngineFormats {
  Size input_size;
  PixelFormat input_format = PixelFormat::yuv420p;
  ColorSpec input_color;
  PixelFormat output_format = PixelFormat::yuv420p;
  ColorSpec output_color;
};

// Time spent per step of one frame, milliseconds. On CUDA these come from
// events, so they are device time; on the CPU, wall time.
struct FrameTimings {
  double upload_ms = 0, convert_in_ms = 0, convert_out_ms = 0, download_ms = 0;
  std::vector<double> stage_ms;
};

// A processed frame in the output format: host memory on loan from the pool
// until the writer drops it, or (picture.on_device) a device picture that
// `device_owner` holds.
struct EngineFrame {
  PooledBuffer storage;
  PlanarView picture;
  std::shared_ptr<void> device_owner;
  int64_t tag = 0;  // caller's identifier, returned unchanged
  FrameTimings timings;
  int lane = 0;  // of the stage chain that made it (its stages' counters)
};

// Byte counters for the stats: what crossed PCIe, what the host copied.
struct EngineTraffic {
  uint64_t host_to_device_bytes = 0;
  uint64_t device_to_host_bytes = 0;
  uint64_t host_copy_bytes = 0;
  // Frames whose device work was captured as a CUDA graph, and replays of those graphs (frame_graphs.h).
  uint64_t frame_graphs_captured = 0, frame_graphs_replayed = 0;
};

// An output picture in device memory that the consumer reads there (an
// encoder's input surface); `owner` keeps it alive.
struct DeviceOutput {
  PlanarView picture;
  std::shared_ptr<void> owner;
};
using DeviceOutputSource = std::function<DeviceOutput()>;

// Turns decoded pictures into encoder pictures through the stage chain:
// convert to RGBA, run the stages, convert to the encoder format. The CUDA
// engine keeps up to `frames_in_flight` frames on as many streams, each
// carrying a ready event; the CPU engine processes each frame on submit.
class FrameEngine {
 public:
  virtual ~FrameEngine() = default;
  // Call with no frame in flight. Returns the output size. The stage chain
  // is configured only where its input size changes: a kept engine's chain
  // costs nothing for the next clip of the same size.
  virtual Size configure(const EngineFormats& formats) = 0;
  // The next frame begins another video (a batch worker's next clip): the
  // temporal stages start again and no device output stays connected. Call
  // with no frame in flight.
  virtual void begin_new_video() = 0;
  // The next frame goes on from `from`'s last (an engine of the same stages on
  // the CPU, at the same size): the temporal stages take its state over
  // (StageChain::take_history). Call with no frame in flight on either.
  virtual void take_history(const FrameEngine& from) = 0;
  virtual bool can_submit() const = 0;
  // `pinned` says the picture already lives in page-locked memory (bench), so
  // the CUDA engine may copy it to the device without staging.
  // A picture on the device (picture.on_device, e.g. an NVDEC surface) is read
  // in place; `keep_alive` then holds it until the frame is done.
  virtual void submit(const PlanarView& picture, const FrameInfo& frame, int64_t tag, bool pinned = false,
                      std::shared_ptr<void> keep_alive = {}) = 0;
  virtual size_t in_flight() const = 0;
  virtual bool oldest_ready() = 0;
  virtual EngineFrame take_oldest() = 0;  // waits on the oldest frame's ready event
  virtual const StageChain& chain() const = 0;
  virtual EngineTraffic traffic() const = 0;
  virtual Backend backend() const = 0;
  // From the next submit on, frames are converted into pictures from `source`
  // instead of being downloaded (CUDA only).
  virtual void set_device_output(DeviceOutputSource source);
};

std::unique_ptr<FrameEngine> make_cpu_engine(std::vector<StageSpec> stages, BufferPool& pool);
// poll_for_done: the host polls for finished frames instead of sleeping on
// them (live input, where a late wake-up is latency).
std::unique_ptr<FrameEngine> make_cuda_engine(std::vector<StageSpec> stages, BufferPool& pool,
                                              int frames_in_flight, bool poll_for_done = false);

// Copies a picture plane by plane between two views of the same format and size.
void copy_picture_host(const PlanarView& src, const PlanarView& dst);
// A view onto `base` laid out tightly (plane_layout) for `format` at `size`.
PlanarView tight_view(uint8_t* base, PixelFormat format, Size size);

}  // namespace sp
