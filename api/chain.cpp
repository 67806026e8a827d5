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
  sp::PooledBuffer converted;  // a YUV input as RGBA; the same rule
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

const char* plane_name(YuvFormat format, int plane) {
  static constexpr const char* kNv12[] = {"Y", "UV", ""};
  static constexpr const char* kI420[] = {"Y", "U", "V"};
  return format == YuvFormat::nv12 ? kNv12[plane] : kI420[plane];
}

sp::PixelFormat pixel_format_of(YuvFormat format) {
  return format == YuvFormat::nv12 ? sp::PixelFormat::nv12 : sp::PixelFormat::yuv420p;
}

void check_yuv(const YuvImage& image) {
  if (image.width <= 0 || image.height <= 0)
    throw Error(ExitCode::usage, "the input is empty (" + std::to_string(image.width) + "x" +
                                     std::to_string(image.height) + ")");
  for (int i = 0; i < image.plane_count(); ++i) {
    const std::string plane = std::string("the input's ") + plane_name(image.format, i) + " plane";
    if (!image.planes[i]) throw Error(ExitCode::usage, plane + " is missing");
    if (image.pitches[i] < image.row_bytes(i))
      throw Error(ExitCode::usage, plane + ": a row pitch of " + std::to_string(image.pitches[i]) +
                                       " bytes is less than its " + std::to_string(image.row_bytes(i)) +
                                       " bytes a row");
  }
}

sp::PlanarView planar_view_of(const YuvImage& image, bool on_device) {
  sp::PlanarView view;
  view.format = pixel_format_of(image.format);
  view.width = image.width;
  view.height = image.height;
  for (int i = 0; i < image.plane_count(); ++i) {
    // The conversion only reads a source; PlanarView is shared with the writers.
    view.plane[i] = const_cast<uint8_t*>(image.planes[i]);
    view.pitch[i] = image.pitches[i];
  }
  view.on_device = on_device;
  return view;
}

sp::ColorSpec color_of(const YuvImage& image) {
  sp::ColorSpec color;
  switch (image.matrix) {
    case YuvMatrix::bt601: color.matrix = sp::ColorMatrix::bt601; break;
    case YuvMatrix::bt709: color.matrix = sp::ColorMatrix::bt709; break;
    case YuvMatrix::bt2020: color.matrix = sp::ColorMatrix::bt2020; break;
  }
  color.range = image.range == YuvRange::full ? sp::ColorRange::full : sp::ColorRange::limited;
  return color;
}

}  // namespace

// The layouts the readers and writers use (pipeline/image.h), at tight pitches.
int YuvImage::plane_count() const { return sp::plane_layout(pixel_format_of(format), width, height).count; }
size_t YuvImage::row_bytes(int plane) const {
  return sp::plane_layout(pixel_format_of(format), width, height).pitch[plane];
}
int YuvImage::rows(int plane) const { return sp::plane_layout(pixel_format_of(format), width, height).rows[plane]; }

Chain::Chain(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Chain::Chain(Chain&&) noexcept = default;
Chain& Chain::operator=(Chain&&) noexcept = default;
Chain::~Chain() {
  if (impl_ && (impl_->stages || impl_->aside || impl_->converted)) {
    impl_->session->impl().enter();
    impl_->stages.reset();
    impl_->aside.reset();
    impl_->converted.reset();
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

void Chain::run(const YuvImage& input, const Image& output, const RunOptions& options) {
  const Image rgba = detail::guarded([&] {
    check_yuv(input);
    Session::Impl& session = impl_->session->impl();
    session.enter();
    const bool cuda = session.device.backend == Backend::cuda;
    if (cuda)
      for (int i = 0; i < input.plane_count(); ++i)
        detail::check_device_memory(input.planes[i], session.device.index,
                                    (std::string("the input's ") + plane_name(input.format, i) + " plane").c_str());
    const size_t pitch = size_t(input.width) * 4;
    if (impl_->converted.bytes() != pitch * size_t(input.height))
      impl_->converted = sp::PooledBuffer(session.pool, {cuda ? sp::MemoryKind::device : sp::MemoryKind::host,
                                                         input.width, input.height, -1, pitch * size_t(input.height)});
    const Image converted{impl_->converted.data(), input.width, input.height, pitch};
    const sp::PlanarView planar = planar_view_of(input, cuda);
    if (cuda) {
      detail::convert_to_rgba_async(planar, color_of(input), converted, options.cuda_stream);
    } else {
      const sp::ScopedWorkerPool threads(impl_->own_pool.get());
      sp::convert_to_rgba_cpu(planar, color_of(input), view_of(converted));
    }
    return converted;
  });
  run(rgba, output, options);
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
