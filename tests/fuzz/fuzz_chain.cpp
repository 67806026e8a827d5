#include "tests/fuzz/fuzz_chain.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "pipeline/errors.h"
#include "pipeline/frame_engine.h"
#include "pipeline/log.h"

namespace sp::fuzz {

namespace {

StageSpec scale_stage(double factor, const char* filter) {
  const StageDescriptor* scale = StageRegistry::instance().find("scale");
  if (!scale) {
    std::fprintf(stderr, "fuzz harness: the scale stage is not linked in\n");
    std::abort();
  }
  StageSpec spec{"scale", default_params(scale->params)};
  spec.params.set("factor", factor);
  spec.params.set("filter", std::string(filter));
  return spec;
}

std::vector<StageSpec> example_chain() { return {scale_stage(0.25, "area"), scale_stage(4.0, "nearest")}; }

// Exit codes a reader may give for input it cannot take.
bool expected_refusal(ExitCode code) {
  return code == ExitCode::data_error || code == ExitCode::usage || code == ExitCode::unavailable;
}

}  // namespace

void quiet_logs() { set_log_level(LogLevel::quiet); }

void run_input_through_chain(const InputOptions& input) {
  InputOptions options = input;
  options.max_frames = kMaxFrames;
  try {
    MediaReader reader(options);
    BufferPool pool;
    std::unique_ptr<FrameEngine> engine;
    EngineFormats formats;
    MediaItem item;
    while (reader.next(item)) {
      if (item.kind != MediaItem::Kind::video) continue;
      const PlanarView picture = item.frame.view();
      const Size size{picture.width, picture.height};
      if (int64_t(size.width) * size.height > kMaxChainPixels) continue;
      if (!engine || size != formats.input_size || picture.format != formats.input_format) {
        engine.reset();
        pool.trim_except(size.width, size.height);
        formats.input_size = size;
        formats.input_format = picture.format;
        formats.input_color = item.frame.color;
        formats.output_format = PixelFormat::yuv420p;
        formats.output_color = item.frame.color;
        engine = make_cpu_engine(example_chain(), pool);
        engine->configure(formats);
      }
      const int64_t index = reader.frames_delivered() - 1;
      engine->submit(picture, FrameInfo{index, 0.0}, index);
      engine->take_oldest();
    }
  } catch (const Error& e) {
    if (!expected_refusal(e.code())) {
      std::fprintf(stderr, "fuzz harness: exit code %d for input data: %s\n", int(e.code()), e.what());
      std::abort();
    }
  }
}

}  // namespace sp::fuzz
