#pragma once
// A chain: the configured stages of a pipeline, run on RGBA8 images that the
// caller owns. On the CPU backend the images are host memory; on CUDA they
// are device memory of the session's device, and the work is queued on the
// caller's stream with no host synchronization.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stylepipe/session.h"

namespace stylepipe {

struct Size {
  int width = 0;
  int height = 0;
  bool operator==(const Size&) const = default;
};

// RGBA8, 4 bytes a pixel, rows `pitch` bytes apart (pitch >= 4 * width).
struct Image {
  uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  size_t pitch = 0;
  Size size() const { return {width, height}; }
};

// A YUV 4:2:0 picture, 8 bits a sample, as decoders give them: NV12 (a Y
// plane, then one of interleaved U,V) or I420 (Y, U and V planes). Chroma
// planes have (width + 1) / 2 samples a row and (height + 1) / 2 rows.
enum class YuvFormat { nv12, i420 };
enum class YuvMatrix { bt601, bt709, bt2020 };
enum class YuvRange { limited, full };  // limited: Y 16-235, UV 16-240
struct YuvImage {
  YuvFormat format = YuvFormat::nv12;
  YuvMatrix matrix = YuvMatrix::bt709;
  YuvRange range = YuvRange::limited;
  int width = 0;
  int height = 0;
  const uint8_t* planes[3] = {nullptr, nullptr, nullptr};  // NV12 uses two
  size_t pitches[3] = {0, 0, 0};                           // bytes a row, each plane's own
  int plane_count() const;              // 2 (NV12) or 3 (I420)
  size_t row_bytes(int plane) const;    // the bytes a row of `plane` holds at least (its pitch's minimum)
  int rows(int plane) const;
};

// One stage and its parameters, each a YAML value as text: {"color", "true"},
// {"line_length", "9"}, {"channels", "cmy"}.
struct StageEntry {
  std::string stage;
  std::map<std::string, std::string> params;
};

struct RunOptions {
  // CUDA only: the stream the work is queued on (a cudaStream_t; null is the
  // legacy default stream). Inputs must be ready in that stream's order.
  void* cuda_stream = nullptr;
  // The frame's time, which temporal stages see; default: its index / 30.
  std::optional<double> time_seconds;
};

class Chain {
 public:
  // From a YAML file: errors are ConfigError with the file's line and column.
  static Chain from_file(const std::string& path, std::shared_ptr<Session> session);
  // From YAML text; `display_name` stands for the file in messages.
  static Chain from_yaml(const std::string& text, std::shared_ptr<Session> session,
                         const std::string& display_name = "<yaml>");
  // From a list of stages, checked like a config's `pipeline:` list.
  static Chain from_stages(const std::vector<StageEntry>& stages, std::shared_ptr<Session> session);

  Chain(Chain&&) noexcept;
  Chain& operator=(Chain&&) noexcept;
  ~Chain();

  const Session& session() const;
  std::vector<std::string> stage_names() const;
  // Whether a stage keeps state from frame to frame (frames must come in order).
  bool temporal() const;
  // The size `run` writes for an input of `input` (xbr scales, say).
  Size output_size(Size input) const;

  // Runs every stage on `input` into `output`, which must be output_size()
  // large. `output` may be `input` itself (or overlap it): the chain then
  // renders into a pooled buffer and copies it over, on the same stream.
  // Temporal stages continue from the previous call; a new input size
  // starts them again.
  void run(const Image& input, const Image& output, const RunOptions& options = {});
  // The same on a YUV picture: converted to RGBA into a buffer of the chain's
  // own (kept between calls, as work queued on it may still run), exactly as
  // `stylepipe run` converts decoded video: the same integer arithmetic on the
  // CPU and CUDA, chroma sited at the centre of its 2x2 block and upsampled
  // bilinearly. On CUDA the planes are device memory of the session's device.
  void run(const YuvImage& input, const Image& output, const RunOptions& options = {});
  // Forgets temporal state: the next frame is a first frame.
  void reset();
  // CPU only: the threads that run this chain's stages. 0 (the default): the
  // process's pool, one thread a core, which every chain with 0 shares and
  // takes in turn. N > 0: N threads of the chain's own (1: the calling thread
  // alone), so that chains called from several threads run side by side.
  // Setting it restarts the temporal stages, as reset() does.
  void set_cpu_threads(int threads);
  int cpu_threads() const;

 private:
  struct Impl;
  explicit Chain(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stylepipe
