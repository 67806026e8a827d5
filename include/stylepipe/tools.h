#pragma once
// The CLI's other commands as calls: configs, stage docs, benchmarks,
// contact sheets and logging.
#include <string>
#include <vector>

#include "stylepipe/errors.h"

namespace stylepipe {

inline constexpr const char* kVersion = "0.1.0";

// Reads and checks a config; throws ConfigError (every problem at once) or
// MediaError when it cannot be read. Returns the number of stages.
size_t validate_config(const std::string& path);

std::string config_json_schema();  // `stylepipe schema`
// `stylepipe stages`: "text", "json" or "markdown" (the README's stage reference).
std::string stages_reference(const std::string& format);

// `stylepipe bench`: the table it prints; the JSON report too where json_path is given.
struct BenchRequest {
  std::string config_path, input, size = "1920x1080", pixel_format = "yuv420p", backend = "auto", json_path;
  int frames = 300, warmup = 30, frames_in_flight = 3;
};
std::string bench(const BenchRequest& request);

// `stylepipe preview`: a labelled contact sheet of one frame through variants.
struct PreviewRequest {
  std::string config_path;
  std::vector<std::string> extra_configs;  // one more tile each
  std::vector<std::string> variations;     // STAGE.PARAM=V1,V2,...: one row each
  std::string input, output;
  double at_seconds = 0;
  std::string backend = "auto";
  std::string font;         // empty: fontconfig's sans-serif
  std::string layout_json;  // where to write the tiles' rectangles and labels
  bool overwrite = false;
};
int preview(const PreviewRequest& request);

// quiet | error | warning | info | debug; false for another word.
bool set_log_level(const std::string& level);
void log_error(const std::string& message);

// For a program that owns its process (the CLI), before any run: runs may
// then tear down the CUDA contexts they made once done with them, so that
// process exit does not pay for it (0.1-0.25 s a GPU). Without it they never
// do: a library's host (PyTorch, CuPy, GStreamer) shares the primary
// context, which a reset would destroy under it.
void allow_device_teardown();
// Tears the CUDA context down early where nothing uses it (after
// allow_device_teardown), so that process exit does not pay for it.
void release_device_early();

// For a program that owns its process (the CLI), before anything in it starts
// CUDA: only the devices it will use, by this process's ordinals, stay
// visible (CUDA_VISIBLE_DEVICES, which its child processes inherit), so that
// the driver starts only those. Measured on an H100 host: 0.13 s with one
// GPU visible, 0.31 s with two. Only a prefix of the ordinals ({0}, {0, 1})
// can be kept, so that the ordinals stay what they were; otherwise, and once
// CUDA has started, it does nothing. A library must not change its host's
// environment: it is the front end's call.
void restrict_cuda_devices(int count);
// The count restrict_cuda_devices() takes for a run's `--devices` value: 1
// where none is given (the first GPU), up to the largest ordinal a list
// names, and 0 (every GPU stays visible) for `all` or a value the run will
// refuse with its own error.
int cuda_devices_named(const std::string& devices);

}  // namespace stylepipe
