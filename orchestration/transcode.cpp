#include "orchestration/transcode.h"

#include <atomic>
#include <chrono>

#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "pipeline/device.h"
#include "pipeline/environment.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"
#include "pipeline/stage.h"
#include "orchestration/transcoder.h"

namespace sp {

Choice select_backend(const std::string& request) {
  if (request == "cpu") return {"cpu", ""};
  std::string why;
  const bool available = cuda_device_available(&why);
  if (request == "cuda") {
    if (!available) throw Error(ExitCode::unavailable, "--backend cuda: " + why);
    return {"cuda", ""};
  }
  if (request != "auto") throw Error(ExitCode::usage, "--backend: '" + request + "' is not one of auto, cuda, cpu");
  if (available) return {"cuda", ""};
  // Said once per process: each --jobs worker thread chooses again, for the same reason.
  static std::once_flag said;
  std::call_once(said, [&why] { log_info("{}: using the CPU backend", why); });
  return {"cpu", why};
}

// NVDEC decodes into GPU memory, so it needs the CUDA backend: known only
// once the device has answered, which the reader asks after probing.
static std::optional<std::string> hardware_decoding_refusal(std::future<Choice>& device) {
  // The answer stays in `device` for the transcoder, a failure included.
  std::promise<Choice> known;
  Choice backend;
  try {
    backend = device.get();
  } catch (...) {
    known.set_exception(std::current_exception());
    device = known.get_future();
    throw;
  }
  known.set_value(backend);
  device = known.get_future();
  if (backend.name == "cuda") return std::nullopt;
  return "the CPU backend is in use" + (backend.reason.empty() ? "" : " (" + backend.reason + ")");
}

// The same file under another name (./x, a symbolic or a hard link) is the
// same device and inode: writing it would destroy the input as it is read.
static void refuse_output_that_is_the_input(const TranscodeOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string& in = options.input.url;
  const std::string& out = options.output.url;
  if (in == "-" || out == "-" || !fs::exists(out, ec) || !fs::exists(in, ec)) return;
  if (fs::equivalent(in, out, ec))
    throw Error(ExitCode::usage, out + ": the output is the input file (" + in + "); write elsewhere");
}

// SP_DEVICE_START_DELAY_MS holds the device thread back before the driver
// starts, as a slow driver would (a host of several GPUs: up to a second):
// tests use it to see a run start on the CPU and hand over to the GPU.
static std::chrono::milliseconds device_start_delay() {
  return std::chrono::milliseconds(
      integer_from_environment("SP_DEVICE_START_DELAY_MS", 0, 60000, "a number of milliseconds up to 60000").value_or(0));
}

int run_transcode(const TranscodeOptions& options, RunStats& stats) {
  const detail::Clock::time_point started = options.clock_start.value_or(detail::Clock::now());
  stats.mark_startup("run started (config read, arguments checked)");
  refuse_output_that_is_the_input(options);
  MediaWriter::preflight(options.output);
  // Written by the device thread, read once the transcoder has its backend.
  std::atomic<double> driver_ready{-1}, context_ready{-1};
  // The stages' host-side caches are made meanwhile too (StageDescriptor::prepare_host).
  const std::shared_future<void> stages_prepared = std::async(std::launch::async, [&options] {
    for (const StageSpec& stage : options.stages) {
      const StageDescriptor* d = StageRegistry::instance().find(stage.name);
      try {
        if (d && d->prepare_host) d->prepare_host(stage.params);
      } catch (const std::exception& e) {
        log_debug("{}: preparing: {}", stage.name, e.what());  // configure() meets it again, and reports
      }
    }
  }).share();
  // Device start-up (driver and context) overlaps with probing the input.
  // The backend is known once the context is made; the same thread then asks
  // whether the GPU has NVENC, while the stages are configured.
  std::promise<Choice> backend_known;
  std::future<Choice> device = backend_known.get_future();
  const auto start_device = [&, log_context = thread_log_context(), cuda_device = current_cuda_device(),
                             delay = device_start_delay()] {
    set_thread_log_context(log_context);
    name_this_thread("sp-device");
    std::this_thread::sleep_for(delay);
    Choice backend;
    try {
      backend = select_backend(options.backend);
      driver_ready = seconds_since_process_start();
      if (backend.name == "cuda") {
        use_cuda_device(cuda_device);
        start_cuda_context();
        context_ready = seconds_since_process_start();
      }
    } catch (...) {
      backend_known.set_exception(std::current_exception());
      return;
    }
    log_debug("device ready");
    backend_known.set_value(backend);
    if (backend.name == "cuda") MediaWriter::learn_nvenc_engine(options.output);
  };
  // Joined when the run returns, thrown or not (the last copy of a std::async future waits).
  const std::shared_future<void> device_work = std::async(std::launch::async, start_device).share();
  InputOptions input = options.input;
  // A whole file (not a segment's window, not live) that is short: see kShortInputPixels.
  // Where NVDEC cannot run at all (the CPU backend, a build without CUDA) that reason is said instead.
  const bool nvdec_possible = kBuildHasCuda && options.backend != "cpu";
  if (nvdec_possible && input.software_decode_up_to_pixels == 0 && !input.window && !input.low_latency &&
      !options.low_latency) {
    input.software_decode_up_to_pixels = kShortInputPixels;
    input.short_input_reason =
        "a short input (up to 120 frames of 1080p): NVDEC's session costs more to open and close than decoding it "
        "on the CPU (--hwdec nvdec to decode on the GPU anyway)";
  }
  input.frames_held = options.effective_queue_depth() + options.frames_in_flight + 2;
  if (input.window) input.window->lead_in = options.lead_in_frames > 0;
  input.hardware_gate = [&device] { return hardware_decoding_refusal(device); };
  std::optional<MediaReader> opened;
  try {
    opened.emplace(input);
  } catch (...) {
    device.wait();  // its errors come second
    throw;
  }
  MediaReader& reader = *opened;
  stats.mark_startup(reader.hardware_decoder_attached() ? "input open (NVDEC session)" : "input open");
  log_debug("input open");
  stats.input = options.input.url;
  stats.output = options.output.url;
  stats.jobs_auto = options.jobs_auto;
  stats.decoder.name = reader.video().codec_name;
  detail::Transcoder transcoder(options, stats, std::move(device), device_work, reader);
  const int code = transcoder.run(reader, started);
  if (driver_ready >= 0) stats.startup.push_back({"backend chosen (CUDA driver probed)", driver_ready});
  if (context_ready >= 0) stats.startup.push_back({"CUDA context created", context_ready});
  if (!options.stats_json_path.empty()) {
    std::ofstream out(options.stats_json_path);
    out << stats.to_json().dump(2) << "\n";
    if (!out) {
      log_error("{}: cannot write stats", options.stats_json_path);
      return code ? code : int(ExitCode::io_error);
    }
  }
  return code;
}

}  // namespace sp
