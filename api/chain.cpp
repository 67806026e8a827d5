#include "stylepipe/chain.h"

#include <algorithm>
#include <optional>

#include "api/public_errors.h"
#include "api/request_options.h"
#include "api/session_impl.h"
#include "pipeline/config.h"
#include "pipeline/parallel.h"
#include "pipeline/stage_chain.h"

namespace stylepipe {

struct Chain::Impl {
  std::shared_ptr<Session> session;
  std::vector<sp::StageSpec> specs;
  std::optional<sp::StageChain> stages;  // made at the first run, again at reset()
  int64_t frames = 0;                     // since the last (re)start: the temporal stages' frame index
  // Where an output over its input is rendered first. The chain's own, not
  // given back between calls: work queued on it may still be running.
  sp::PooledBuffer aside;
  std::unique_ptr<sp::WorkerPool> own_pool;  // set_cpu_threads(N > 0); null: the process's shared pool

  sp::Backend backend() const {
    return session->device().backend == Backend::cuda ? sp::Backend::cuda : sp::Backend::cpu;
  }
  sp::StageChain& configured_for(Size input) {
    if (!stages) stages.emplace(specs, backend(), session->impl().pool);
    if (stages->input_size() != sp::Size{input.width, input.height}) {
      stages->configure({input.width, input.height});
      frames = 0;
    }
    return *stages;
  }
};

namespace {

std::shared_ptr<Session> checked(std::shared_ptr<Session> session) {
  if (!session) throw Error(ExitCode::usage, "a chain needs a session (stylepipe::Session::open)");
  return session;
}

sp::RgbaView view_of(const Image& image) { return {image.data, image.width, image.height, image.pitch}; }

bool overlap(const Image& a, const Image& b) {
  const uint8_t* a_end = a.data + a.pitch * size_t(a.height);
  const uint8_t* b_end = b.data + b.pitch * size_t(b.height);
  return a.data < b_end && b.data < a_end;
}

void check_image(const Image& image, const char* what) {
  if (!image.data || image.width <= 0 || image.height <= 0)
    throw Error(ExitCode::usage, std::string(what) + " is empty (" + std::to_string(image.width) + "x" +
                                     std::to_string(image.height) + ")");
  if (image.pitch < size_t(image.width) * 4)
    throw Error(ExitCode::usage, std::string(what) + ": a row pitch of " + std::to_string(image.pitch) +
                                     " bytes is less than 4 x width (" + std::to_string(image.width * 4) + ")");
}

}  // namespace

Chain::Chain(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Chain::Chain(Chain&&) noexcept = default;
Chain& Chain::operator=(Chain&&) noexcept = default;
Chain::~Chain() {
  if (impl_ && (impl_->stages || impl_->aside)) {
    impl_->session->impl().enter();
    impl_->stages.reset();
    impl_->aside.reset();
  }
}

Chain Chain::from_file(const std::string& path, std::shared_ptr<Session> session) {
  return detail::guarded([&] {
    auto impl = std::make_unique<Impl>();
    impl->session = checked(std::move(session));
    impl->specs = detail::stage_specs(sp::load_config(path));
    return Chain(std::move(impl));
  });
}

Chain Chain::from_yaml(const std::string& text, std::shared_ptr<Session> session, const std::string& display_name) {
  return detail::guarded([&] {
    auto impl = std::make_unique<Impl>();
    impl->session = checked(std::move(session));
    impl->specs = detail::stage_specs(sp::parse_config(text, display_name));
    return Chain(std::move(impl));
  });
}

Chain Chain::from_stages(const std::vector<StageEntry>& stages, std::shared_ptr<Session> session) {
  // One stage a line: a problem's line number is its stage's place in the list, plus one.
  std::string yaml = "pipeline:\n";
  for (const StageEntry& entry : stages) {
    yaml += "  - " + entry.stage + ": {";
    bool first = true;
    for (const auto& [name, value] : entry.params) {
      yaml += (first ? "" : ", ") + name + ": " + value;
      first = false;
    }
    yaml += "}\n";
  }
  return from_yaml(yaml, std::move(session), "<stages>");
}

const Session& Chain::session() const { return *impl_->session; }

std::vector<std::string> Chain::stage_names() const {
  std::vector<std::string> names;
  for (const sp::StageSpec& s : impl_->specs) names.push_back(s.name);
  return names;
}

bool Chain::temporal() const {
  return detail::guarded([&] {
    impl_->session->impl().enter();
    if (!impl_->stages) impl_->stages.emplace(impl_->specs, impl_->backend(), impl_->session->impl().pool);
    return impl_->stages->any_temporal();
  });
}

Size Chain::output_size(Size input) const {
  return detail::guarded([&] {
    if (input.width <= 0 || input.height <= 0)
      throw Error(ExitCode::usage, "an input of " + std::to_string(input.width) + "x" + std::to_string(input.height) +
                                       " has no pixels");
    impl_->session->impl().enter();
    const sp::ScopedWorkerPool threads(impl_->own_pool.get());  // plans made at configure take its size
    const sp::StageChain& stages = impl_->configured_for(input);
    return Size{stages.output_size().width, stages.output_size().height};
  });
}

void Chain::run(const Image& input, const Image& output, const RunOptions& options) {
  detail::guarded([&] {
    check_image(input, "the input");
    check_image(output, "the output");
    Session::Impl& session = impl_->session->impl();
    session.enter();
    const sp::ScopedWorkerPool threads(impl_->own_pool.get());
    const bool cuda = session.device.backend == Backend::cuda;
    if (cuda) {
      detail::check_device_memory(input.data, session.device.index, "the input");
      detail::check_device_memory(output.data, session.device.index, "the output");
    }
    sp::StageChain& stages = impl_->configured_for(input.size());
    const Size expected{stages.output_size().width, stages.output_size().height};
    if (output.size() != expected)
      throw Error(ExitCode::usage, "the output is " + std::to_string(output.width) + "x" + std::to_string(output.height) +
                                       ", but the chain makes " + std::to_string(expected.width) + "x" +
                                       std::to_string(expected.height) + " of a " + std::to_string(input.width) + "x" +
                                       std::to_string(input.height) + " input");
    const sp::FrameInfo frame{impl_->frames, options.time_seconds.value_or(double(impl_->frames) / 30.0)};
    // A stage reads neighbours of the pixel it writes: an output over the
    // input is rendered aside, then copied over it.
    const bool aside = overlap(input, output);
    Image target = output;
    if (aside) {
      const size_t pitch = size_t(output.width) * 4;
      if (impl_->aside.bytes() != pitch * size_t(output.height))
        impl_->aside = sp::PooledBuffer(session.pool, {cuda ? sp::MemoryKind::device : sp::MemoryKind::host,
                                                       output.width, output.height, -1, pitch * size_t(output.height)});
      target = Image{impl_->aside.data(), output.width, output.height, pitch};
    }
    std::vector<double> stage_ms;
    if (cuda) {
      auto stream = static_cast<cudaStream_t>(options.cuda_stream);
      stages.run_cuda(view_of(input), view_of(target), frame, stream, {});
      if (aside) detail::copy_image_async(output, target, options.cuda_stream);
    } else {
      stages.run_cpu(view_of(input), view_of(target), frame, stage_ms);
      if (aside)
        for (int y = 0; y < output.height; ++y)
          std::copy_n(target.data + y * target.pitch, target.pitch, output.data + y * output.pitch);
    }
    ++impl_->frames;
  });
}

void Chain::reset() {
  detail::guarded([&] {
    impl_->session->impl().enter();
    impl_->stages.reset();
    impl_->frames = 0;
  });
}

void Chain::set_cpu_threads(int threads) {
  detail::guarded([&] {
    if (threads < 0) throw Error(ExitCode::usage, "cpu_threads is " + std::to_string(threads) + ": give 0 (the shared pool) or more");
    impl_->session->impl().enter();
    impl_->own_pool = threads > 0 ? std::make_unique<sp::WorkerPool>(threads) : nullptr;
    impl_->stages.reset();
    impl_->frames = 0;
  });
}

int Chain::cpu_threads() const { return impl_->own_pool ? impl_->own_pool->size() : 0; }

}  // namespace stylepipe
