#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "pipeline/errors.h"
#include "pipeline/parallel.h"
#include "stages/scale/scale.h"

namespace sp {

using namespace scale_detail;

namespace {

constexpr double kMaxFactor = 64.0;

ScaleFilter filter_from(const std::string& name) {
  if (name == "nearest") return ScaleFilter::nearest;
  if (name == "area") return ScaleFilter::area;
  return ScaleFilter::bilinear;
}

int checked_side(int64_t v, const char* what, Size input) {
  if (v > kMaxSide)
    throw Error(ExitCode::config, fmt::format("stage 'scale': output {} {} (from input {}x{}) exceeds the maximum {}",
                                              what, v, input.width, input.height, kMaxSide));
  return int(std::max<int64_t>(1, v));
}

// round(a * b / c) for positive integers.
int64_t rounded_ratio(int64_t a, int64_t b, int64_t c) { return (2 * a * b + c) / (2 * c); }

}  // namespace

ScaleSettings scale_settings_from(const Params& params) {
  ScaleSettings s;
  s.width = int(params.get_int("width"));
  s.height = int(params.get_int("height"));
  s.factor = params.get_number("factor");
  s.filter = filter_from(params.get_string("filter"));
  return s;
}

Size scale_output_size(const ScaleSettings& s, Size in) {
  if (in.width <= 0 || in.height <= 0 || in.width > kMaxSide || in.height > kMaxSide)
    throw Error(ExitCode::data_error,
                fmt::format("stage 'scale': input {}x{} is outside 1..{} per side", in.width, in.height, kMaxSide));
  if (s.width > 0 && s.height > 0) return {checked_side(s.width, "width", in), checked_side(s.height, "height", in)};
  if (s.width > 0)
    return {checked_side(s.width, "width", in),
            checked_side(rounded_ratio(in.height, s.width, in.width), "height", in)};
  if (s.height > 0)
    return {checked_side(rounded_ratio(in.width, s.height, in.height), "width", in),
            checked_side(s.height, "height", in)};
  return {checked_side(std::llround(in.width * s.factor), "width", in),
          checked_side(std::llround(in.height * s.factor), "height", in)};
}

StageDescriptor make_scale_descriptor() {
  StageDescriptor d;
  d.name = "scale";
  d.summary =
      "Resize to width x height or by a factor (nearest, bilinear or area); factor 1 is an exact copy. CPU and CUDA "
      "results are identical.";
  // clang-format off
  d.params = {
      {"width", ParamType::integer, int64_t(0), 0, kMaxSide, {},
       "Output width in pixels. 0: from height keeping the input's aspect ratio, or from factor when height is 0 too.",
       true},
      {"height", ParamType::integer, int64_t(0), 0, kMaxSide, {},
       "Output height in pixels. 0: from width keeping the input's aspect ratio, or from factor when width is 0 too.",
       true},
      {"factor", ParamType::number, 1.0, {}, kMaxFactor, {},
       "Scale both sides by this factor (> 0, e.g. 2 or 0.5), rounded to whole pixels. Not combinable with "
       "width/height."},
      {"filter", ParamType::choice, std::string("bilinear"), {}, {}, {"nearest", "bilinear", "area"},
       "Resampling filter. Geometry is pixel-centred (as in swscale and OpenCV's INTER_LINEAR): output pixel d "
       "covers [d, d+1) * in/out of the input. nearest: the input pixel holding the output pixel's centre (exact "
       "replication on integer factors; pixel art). bilinear: the two nearest input pixels per axis around "
       "(d + 0.5) * in/out - 0.5, edges repeated. area: the exact mean of the input over the output pixel's "
       "footprint; best for downscaling, and on upscales it replicates pixels, blending only across input pixel "
       "edges (sharp pixel art at non-integer factors)."},
  };
  // clang-format on
  d.rules = {
      {"factor_or_size", "factor is not given together with a nonzero width or height."},
      {"factor_positive", "factor is greater than 0."},
  };
  d.validate = [](const Params& p) -> std::optional<std::string> {
    const bool sized = p.get_int("width") > 0 || p.get_int("height") > 0;
    const double factor = p.get_number("factor");
    if (sized && (p.given("factor") || factor != 1.0))
      return "factor cannot be combined with width or height: give either factor or an output size";
    if (!(factor > 0)) return fmt::format("factor must be greater than 0 (got {})", factor);
    return std::nullopt;
  };
  d.create = [](const Params& p) -> std::unique_ptr<Stage> {
    return std::make_unique<ScaleStage>(scale_settings_from(p));
  };
  return d;
}

static StageRegistration reg{make_scale_descriptor()};

Size ScaleStage::configure(Size input, Backend backend, ScratchAllocator& scratch) {
  input_ = input;
  output_ = scale_output_size(settings_, input);
  x_taps_ = y_taps_ = nullptr;
  if (backend == Backend::cpu && !identity()) {
    // Taps depend only on the column / row: computed once here, not per pixel.
    visit_filter(settings_.filter, input_, output_, [&](const auto& f) {
      using Tap = typename std::decay_t<decltype(f)>::Tap;
      auto* xs = scratch.allocate_array<Tap>(size_t(output_.width));
      auto* ys = scratch.allocate_array<Tap>(size_t(output_.height));
      for (int x = 0; x < output_.width; ++x) xs[x] = f.x_tap(x);
      for (int y = 0; y < output_.height; ++y) ys[y] = f.y_tap(y);
      x_taps_ = xs;
      y_taps_ = ys;
    });
  }
  return output_;
}

void ScaleStage::check_views(const RgbaView& in, const RgbaView& out) const {
  if (in.size() != input_ || out.size() != output_)
    throw Error(ExitCode::internal,
                fmt::format("stage 'scale' configured for {}x{} -> {}x{} but got {}x{} -> {}x{}", input_.width,
                            input_.height, output_.width, output_.height, in.width, in.height, out.width, out.height));
}

void ScaleStage::process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo&) {
  check_views(in, out);
  if (identity()) {
    if (in.data == out.data) return;
    parallel_for(
        out.height,
        [&](int y0, int y1) {
          for (int y = y0; y < y1; ++y) std::memcpy(out.row(y), in.row(y), size_t(out.width) * 4);
        },
        16);
    return;
  }
  visit_filter(settings_.filter, input_, output_, [&](const auto& f) {
    using Tap = typename std::decay_t<decltype(f)>::Tap;
    const Tap* xs = static_cast<const Tap*>(x_taps_);
    const Tap* ys = static_cast<const Tap*>(y_taps_);
    parallel_for(
        out.height,
        [&](int y0, int y1) {
          for (int y = y0; y < y1; ++y) {
            uint32_t* row = out.row32(y);
            const Tap ty = ys[y];
            for (int x = 0; x < out.width; ++x) row[x] = f.pixel(in, xs[x], ty);
          }
        },
        4);
  });
}

std::optional<GpuCost> ScaleStage::gpu_cost(Size in) const {
  // A pass over both pictures, 0.069 ms at most measured (1920x1080 to twice
  // that, bilinear), plus a launch (orchestration/gpu_cost_test.cpp).
  const Size out = scale_output_size(settings_, in);
  const double megapixels = (double(in.width) * in.height + double(out.width) * out.height) / 1e6;
  return GpuCost{0.005 + 0.0065 * megapixels, out};
}

double ScaleStage::floor_bytes(Size in, Size out) const {
  const double in_px = double(in.width) * in.height, out_px = double(out.width) * out.height;
  double read = in_px;
  if (in != out && settings_.filter == ScaleFilter::nearest) read = std::min(in_px, out_px);
  if (in != out && settings_.filter == ScaleFilter::bilinear) read = std::min(in_px, 4 * out_px);
  return 4.0 * (read + out_px);
}

}  // namespace sp
