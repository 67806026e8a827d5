#include "gstreamer/engine.h"

#include <cstring>

#include "stylepipe/errors.h"

namespace spgst {

namespace {

std::shared_ptr<stylepipe::Session> open_session(const EngineOptions& options, std::string* fallback_reason) {
  using stylepipe::Device;
  const int index = options.cuda_device < 0 ? 0 : options.cuda_device;
  switch (options.backend) {
    case BackendChoice::cpu:
      return stylepipe::Session::open(Device::cpu());
    case BackendChoice::cuda:  // asked for by name: no fallback, the DeviceError says why
      return stylepipe::Session::open(Device::cuda(index));
    case BackendChoice::automatic:
      break;
  }
  std::string why;
  if (!stylepipe::build_has_cuda()) {
    why = "this build of stylepipe has no CUDA backend";
  } else if (!stylepipe::cuda_available(&why)) {
    why = "CUDA is not available (" + why + ")";
  } else {
    try {
      return stylepipe::Session::open(Device::cuda(index));
    } catch (const stylepipe::DeviceError& e) {
      why = e.what();
    }
  }
  if (fallback_reason) *fallback_reason = why;
  return stylepipe::Session::open(Device::cpu());
}

}  // namespace

Engine::Engine(const EngineOptions& options, std::string* fallback_reason) : options_(options) {
  if (options_.config_path.empty() == options_.pipeline_text.empty())
    throw stylepipe::Error(stylepipe::ExitCode::usage,
                           options_.config_path.empty()
                               ? "no config: set the `config` property (a YAML file) or `pipeline` (inline YAML)"
                               : "both `config` and `pipeline` are set: give one of them");
  // The config is read first: its errors come before any device's.
  make_chain(stylepipe::Session::open(stylepipe::Device::cpu()));
  session_ = open_session(options_, fallback_reason);
  chain_.emplace(make_chain(session_));
}

Engine::~Engine() = default;

stylepipe::Chain Engine::make_chain(std::shared_ptr<stylepipe::Session> session) const {
  if (!options_.config_path.empty()) return stylepipe::Chain::from_file(options_.config_path, std::move(session));
  return stylepipe::Chain::from_yaml(options_.pipeline_text, std::move(session), "<pipeline property>");
}

std::string Engine::stage_list() const {
  std::string list;
  for (const std::string& name : chain_->stage_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

bool Engine::temporal() const { return chain_->temporal(); }

stylepipe::Size Engine::output_size(stylepipe::Size input) {
  std::lock_guard lock(sizes_mutex_);
  const auto key = std::make_pair(input.width, input.height);
  if (auto found = sizes_.find(key); found != sizes_.end()) return found->second;
  // A chain of its own, on the CPU: sizes do not depend on the backend, and
  // its scratch is given back as soon as it has answered.
  const stylepipe::Size output = make_chain(stylepipe::Session::open(stylepipe::Device::cpu())).output_size(input);
  sizes_.emplace(key, output);
  return output;
}

void run_chain(stylepipe::Chain& chain, const InputFrame& input, const stylepipe::Image& output,
               const stylepipe::RunOptions& options) {
  if (input.layout == Layout::yuv)
    chain.run(input.yuv, output, options);
  else
    chain.run(input.packed, output, options);
}

InputFrame Engine::without_bgrx(const InputFrame& input) {
  if (input.layout != Layout::bgrx) return input;
  const stylepipe::Image& bgrx = input.packed;
  const size_t pitch = size_t(bgrx.width) * 4;
  converted_.resize(pitch * size_t(bgrx.height));
  for (int y = 0; y < bgrx.height; ++y) {
    const uint8_t* from = bgrx.data + size_t(y) * bgrx.pitch;
    uint8_t* to = converted_.data() + size_t(y) * pitch;
    for (int x = 0; x < bgrx.width; ++x, from += 4, to += 4) {
      to[0] = from[2];
      to[1] = from[1];
      to[2] = from[0];
      to[3] = 255;
    }
  }
  InputFrame rgba;
  rgba.packed = {converted_.data(), bgrx.width, bgrx.height, pitch};
  return rgba;
}

void Engine::count(const InputFrame& input, bool on_device, bool staged, bool pinned) {
  std::lock_guard lock(stats_mutex_);
  ++stats_.frames;
  stats_.device_frames += on_device;
  stats_.uploads += staged;
  stats_.downloads += staged;
  stats_.pinned_frames += pinned;
  stats_.converted_frames += input.layout == Layout::bgrx;
  stats_.yuv_frames += input.layout == Layout::yuv;
}

void Engine::run_host(const InputFrame& input, const stylepipe::Image& output, std::optional<double> time_seconds) {
  const InputFrame frame = without_bgrx(input);
  stylepipe::RunOptions run_options;
  run_options.time_seconds = time_seconds;
  const bool staged = backend() == stylepipe::Backend::cuda;
  bool pinned = false;
  if (!staged) {
    run_chain(*chain_, frame, output, run_options);
  } else {
    if (!staging_) staging_ = std::make_unique<HostStaging>(cuda_device());
    pinned = staging_->run(*chain_, frame, output, run_options);
  }
  count(input, false, staged, pinned);
}

void Engine::run_device(const InputFrame& input, const stylepipe::Image& output, void* stream,
                        std::optional<double> time_seconds) {
  stylepipe::RunOptions run_options;
  run_options.cuda_stream = stream;
  run_options.time_seconds = time_seconds;
  run_chain(*chain_, input, output, run_options);
  count(input, true, false, false);
}

void Engine::reset() {
  chain_->reset();
  std::lock_guard lock(stats_mutex_);
  ++stats_.resets;
}

EngineStats Engine::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

}  // namespace spgst
