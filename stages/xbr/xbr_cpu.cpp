#include "stages/xbr/xbr.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include "pipeline/parallel.h"
#include "stages/xbr/xbr_rules.h"

namespace sp {
namespace {

// About the 90th percentile of the distance between pixels that were equal
// before x264 at crf 28 (yuv420p), and where level-2 decisions on such clips
// agree best with those on the lossless source (see README.md).
constexpr double kDefaultThreshold = 32;

// Counts decisions of a chunk of rows.
struct CountTally {
  XbrTallies t;
  void at_pixel(int, int) {}
  void add(int, bool rule, bool level2) {
    t.edges += rule;
    t.level2 += level2;
  }
};

// Writes each pixel's decisions into a map (see xbr_decision_map()).
struct MapTally {
  uint8_t* map = nullptr;
  int width = 0;
  uint8_t* cell = nullptr;
  void at_pixel(int x, int y) { cell = map + static_cast<size_t>(y) * width + x; }
  void add(int rot, bool rule, bool level2) {
    *cell |= static_cast<uint8_t>((level2 ? 1u : 0u) << rot) | static_cast<uint8_t>((rule ? 1u : 0u) << (rot + 4));
  }
};

struct SilentTally {
  void at_pixel(int, int) {}
  void add(int, bool, bool) {}
};

void key_rows(const RgbaView& in, uint32_t* keys, int y0, int y1) {
  for (int y = y0; y < y1; ++y) {
    const uint32_t* src = in.row32(y);
    uint32_t* key = keys + static_cast<size_t>(y) * in.width;
    for (int x = 0; x < in.width; ++x) key[x] = xbr::yuv_key(src[x]);
  }
}

template <int N, class Rules, class Tally>
void expand_rows(const RgbaView& in, const RgbaView& out, const uint32_t* keys, const Rules& rules, int y0, int y1,
                 Tally& tally) {
  const int w = in.width, h = in.height;
  xbr::Neighborhood nb;
  uint32_t blk[N * N];
  for (int y = y0; y < y1; ++y) {
    const uint32_t* px_rows[5];
    const uint32_t* key_rows[5];
    for (int r = 0; r < 5; ++r) {
      const int row = std::clamp(y + r - 2, 0, h - 1);
      px_rows[r] = in.row32(row);
      key_rows[r] = keys + static_cast<size_t>(row) * w;
    }
    uint32_t* dst[N];
    for (int r = 0; r < N; ++r) dst[r] = out.row32(y * N + r);
    for (int x = 0; x < w; ++x) {
      int cols[5];
      for (int c = 0; c < 5; ++c) cols[c] = std::clamp(x + c - 2, 0, w - 1);
      for (int r = 0; r < 5; ++r) {
        for (int c = 0; c < 5; ++c) {
          nb.px[r][c] = px_rows[r][cols[c]];
          nb.key[r][c] = key_rows[r][cols[c]];
        }
      }
      tally.at_pixel(x, y);
      xbr::xbr_expand<N>(nb, rules, blk, tally);
      for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) dst[r][x * N + c] = xbr::finish_pixel(blk[r * N + c], nb.px[2][2]);
    }
  }
}

template <class Rules, class Tally>
void expand_rows_scaled(int scale, const RgbaView& in, const RgbaView& out, const uint32_t* keys, const Rules& rules,
                        int y0, int y1, Tally& tally) {
  switch (scale) {
    case 2: expand_rows<2>(in, out, keys, rules, y0, y1, tally); break;
    case 3: expand_rows<3>(in, out, keys, rules, y0, y1, tally); break;
    default: expand_rows<4>(in, out, keys, rules, y0, y1, tally); break;
  }
}

// Calls fn(rules) with the rules of the configured mode.
template <class Fn>
void with_rules(const XbrSettings& s, Fn&& fn) {
  if (s.mode == XbrMode::threshold)
    fn(xbr::ThresholdRules{s.threshold});
  else
    fn(xbr::ExactRules{});
}

}  // namespace

XbrSettings xbr_settings_from(const Params& params) {
  XbrSettings s;
  s.scale = static_cast<int>(params.get_int("scale"));
  s.mode = params.get_string("mode") == "threshold" ? XbrMode::threshold : XbrMode::exact;
  // Distances are integers, so a fractional threshold acts as the next integer up.
  s.threshold = static_cast<int>(std::ceil(params.get_number("threshold")));
  return s;
}

StageDescriptor make_xbr_descriptor() {
  StageDescriptor d;
  d.name = "xbr";
  d.summary = "Pixel-art upscaling by 2, 3 or 4 with the xBR rules; `mode: exact` matches `ffmpeg -vf xbr=N` bit for bit";
  d.params = {
      ParamSpec{"scale", ParamType::integer, int64_t{2}, 2.0, 4.0, {},
                "Upscaling factor: every input pixel becomes a scale x scale block (2, 3 or 4, like FFmpeg's xbr=n)."},
      ParamSpec{"mode", ParamType::choice, std::string("exact"), std::nullopt, std::nullopt, {"exact", "threshold"},
                "exact: FFmpeg's rules, bit-exact with `ffmpeg -vf xbr=N`; use it for lossless sources (emulators, "
                "PNG, lossless video). threshold: the level-2 (shallow slope) rules treat colours closer than "
                "`threshold` as equal instead of requiring identical pixels; use it for pixel art that went "
                "through a lossy codec, where codec noise otherwise makes those rules misfire."},
      ParamSpec{"threshold", ParamType::number, kDefaultThreshold, 1.0, 155.0, {},
                "Only with mode: threshold. Colour distance (FFmpeg's |dY|+|dU|+|dV| on 8-bit integer YUV) below "
                "which the level-2 rules count two colours as the same. Raise it for noisier sources, lower it "
                "for art with subtle shading; 155 is xBR's own 'similar colour' limit. Fractions round up."},
  };
  d.rules = {{"threshold_needs_threshold_mode", "threshold is given only with mode: threshold."}};
  d.validate = [](const Params& p) -> std::optional<std::string> {
    if (p.given("threshold") && p.get_string("mode") != "threshold")
      return std::string("xbr.threshold only applies with mode: threshold");
    return std::nullopt;
  };
  d.create = [](const Params& p) -> std::unique_ptr<Stage> { return std::make_unique<XbrStage>(xbr_settings_from(p)); };
  return d;
}

void xbr_expand_cpu(const RgbaView& in, const RgbaView& out, const XbrSettings& settings, uint32_t* keys,
                    XbrTallies* tallies) {
  if (tallies) *tallies = {};
  if (in.width <= 0 || in.height <= 0) return;
  parallel_for(in.height, [&](int y0, int y1) { key_rows(in, keys, y0, y1); }, 16);
  std::atomic<uint64_t> edges{0}, level2{0};
  with_rules(settings, [&](const auto& rules) {
    parallel_for(
        in.height,
        [&](int y0, int y1) {
          if (tallies) {
            CountTally t;
            expand_rows_scaled(settings.scale, in, out, keys, rules, y0, y1, t);
            edges += t.t.edges;
            level2 += t.t.level2;
          } else {
            SilentTally t;
            expand_rows_scaled(settings.scale, in, out, keys, rules, y0, y1, t);
          }
        },
        4);
  });
  if (tallies) *tallies = {edges.load(), level2.load()};
}

std::vector<uint8_t> xbr_decision_map(const RgbaView& in, const XbrSettings& settings) {
  const size_t count = static_cast<size_t>(in.width) * in.height;
  std::vector<uint32_t> keys(count);
  std::vector<uint32_t> pixels(count * settings.scale * settings.scale);
  const RgbaView out{reinterpret_cast<uint8_t*>(pixels.data()), in.width * settings.scale,
                     in.height * settings.scale, static_cast<size_t>(in.width) * settings.scale * 4};
  std::vector<uint8_t> map(count, 0);
  if (count == 0) return map;
  key_rows(in, keys.data(), 0, in.height);
  with_rules(settings, [&](const auto& rules) {
    MapTally t{map.data(), in.width, nullptr};
    expand_rows_scaled(settings.scale, in, out, keys.data(), rules, 0, in.height, t);
  });
  return map;
}

Size XbrStage::configure(Size input, Backend backend, ScratchAllocator& scratch) {
  backend_ = backend;
  keys_ = nullptr;
  counted_ = false;
  if (backend == Backend::cpu && input.width > 0 && input.height > 0) {
    const size_t count = static_cast<size_t>(input.width) * input.height;
    keys_ = scratch.allocate_array<uint32_t>(count);
  }
  return {input.width * settings_.scale, input.height * settings_.scale};
}

void XbrStage::process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo&) {
  xbr_expand_cpu(in, out, settings_, keys_, &last_);
  counted_ = true;
}

std::optional<GpuCost> XbrStage::gpu_cost(Size in) const {
  // Rules on every input pixel, and the output written (scale^2 of it):
  // 0.13 / 0.18 / 0.23 ms at 1920x1080 by 2 / 3 / 4 (orchestration/gpu_cost_test.cpp).
  const int s = settings_.scale;
  const double megapixels = double(in.width) * in.height / 1e6;
  return GpuCost{0.005 + megapixels * (0.06 + 0.005 * s * s), Size{in.width * s, in.height * s}};
}

double XbrStage::floor_bytes(Size in, Size out) const {
  return 4.0 * (static_cast<double>(in.width) * in.height + static_cast<double>(out.width) * out.height);
}

StageCounters XbrStage::counters() const {
  if (!counted_) return {};
  return {{"xbr_edge_corners", static_cast<double>(last_.edges)},
          {"xbr_level2_corners", static_cast<double>(last_.level2)}};
}

static StageRegistration reg{make_xbr_descriptor()};

}  // namespace sp
