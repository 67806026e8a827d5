#pragma once
// NVENC through FFmpeg (h264_nvenc, hevc_nvenc, av1_nvenc): which encoder a
// run gets, why it does not get NVENC, and how the x264-style quality knobs
// (crf, preset) map onto NVENC's.
extern "C" {
#include <libavcodec/avcodec.h>
}

#include <optional>
#include <string>
#include <vector>

#include "pipeline/device.h"

namespace sp {

// --encoder: `automatic` uses NVENC for codecs that have it when the GPU can
// (else the software encoder, saying why); `nvenc` fails (exit 69) where it
// cannot; `software` always uses the encoder --codec names.
enum class EncoderChoice { automatic, nvenc, software };
std::optional<EncoderChoice> parse_encoder_choice(const std::string& text);

// h264_nvenc for libx264 (and any H.264 encoder), hevc_nvenc for HEVC,
// av1_nvenc for AV1; nullptr where NVENC has no such codec or FFmpeg lacks it.
const AVCodec* nvenc_counterpart(const AVCodec* encoder);

// Why opening NVENC failed, from the error code and FFmpeg's last log line:
// no NVENC on this GPU, the session limit, or the driver's own words.
std::string explain_nvenc_failure(int error, const std::string& log_line);
// explain_nvenc_failure's words for a GPU without the engine: a fact of the
// hardware, which a process need find out only once per device.
inline constexpr const char* kNoNvencEngine = "this GPU has no NVENC engine";

// GPUs found to have no NVENC engine, kept between processes: the first probe
// of a process took 0.26 s on an H200, more than the rest of a short run's
// start. One cuda_device_identity() a line, in
// $XDG_CACHE_HOME/stylepipe/gpus-without-nvenc (~/.cache where unset); ""
// where neither variable is set. Deleting the file makes the GPUs probed again.
std::string gpus_without_nvenc_path();
bool listed_without_nvenc(const std::string& path, const std::string& identity);
// Adds the line (unless listed); a cache that cannot be written is left be.
void list_without_nvenc(const std::string& path, const std::string& identity);

// Whether every one of `gpus` is known to have no NVENC engine, read before
// CUDA starts: its UUID is listed at `path`, or another GPU of its model is
// (one model, one set of engines). False for an empty `gpus`.
bool known_without_nvenc(const std::string& path, const std::vector<DriverGpu>& gpus);

// x264 presets ultrafast..placebo map to NVENC p1..p7, crf to constant
// quality `cq` at the same number; low latency: tune ull, no delay, no
// B-frames, no lookahead. `settings` gets a readable summary.
void set_nvenc_options(AVDictionary** options, int crf, const std::string& preset, bool low_latency,
                       std::string* settings);
std::string nvenc_preset_for(const std::string& x264_preset);

// NVENC reads its input from a pool of CUDA frames of `format` (the encoder's
// picture format) on `device`: the pipeline converts its output straight into
// them, so pictures never cross PCIe. Returns the pool, or null with
// `*error` set where the CUDA frames context does not take `format`.
AVBufferRef* make_cuda_frames_pool(AVBufferRef* device, AVPixelFormat format, int width, int height, int* error);

}  // namespace sp
