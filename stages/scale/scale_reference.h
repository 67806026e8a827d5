#pragma once
// Float64 models of the scale filters, written from the geometry in
// scale_math.h's comment and nothing else: output pixel x covers
// [x, x+1) * src/dst, input pixel i covers [i, i+1).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "stages/scale/scale.h"
#include "tests/support/test_support.h"

namespace sp::test {

inline const uint8_t* ref_px(const HostImage& in, int x, int y) { return &in.pixels[(size_t(y) * in.width + x) * 4]; }

inline HostImage ref_nearest(const HostImage& in, int w, int h) {
  HostImage out(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int sx = std::min(in.width - 1, int(std::floor((x + 0.5) * in.width / w)));
      const int sy = std::min(in.height - 1, int(std::floor((y + 0.5) * in.height / h)));
      std::memcpy(&out.pixels[(size_t(y) * w + x) * 4], ref_px(in, sx, sy), 4);
    }
  return out;
}

inline HostImage ref_bilinear(const HostImage& in, int w, int h) {
  HostImage out(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double fx = std::clamp((x + 0.5) * in.width / w - 0.5, 0.0, double(in.width - 1));
      const double fy = std::clamp((y + 0.5) * in.height / h - 0.5, 0.0, double(in.height - 1));
      const int x0 = int(std::floor(fx)), y0 = int(std::floor(fy));
      const int x1 = std::min(x0 + 1, in.width - 1), y1 = std::min(y0 + 1, in.height - 1);
      const double a = fx - x0, b = fy - y0;
      for (int c = 0; c < 4; ++c) {
        const double v = (1 - a) * (1 - b) * ref_px(in, x0, y0)[c] + a * (1 - b) * ref_px(in, x1, y0)[c] +
                         (1 - a) * b * ref_px(in, x0, y1)[c] + a * b * ref_px(in, x1, y1)[c];
        out.pixels[(size_t(y) * w + x) * 4 + c] = uint8_t(std::floor(v + 0.5));
      }
    }
  return out;
}

// Coverage of input pixels by output pixel d along one axis.
struct RefSpan {
  int begin = 0;
  std::vector<double> weights;
};
inline RefSpan ref_span(int d, int src, int dst) {
  const double a = double(d) * src / dst, b = double(d + 1) * src / dst;
  RefSpan s;
  s.begin = int(std::floor(a));
  for (int i = s.begin; i < src && i < b; ++i)
    s.weights.push_back((std::min(b, i + 1.0) - std::max(a, double(i))) / (b - a));
  return s;
}

inline HostImage ref_area(const HostImage& in, int w, int h) {
  HostImage out(w, h);
  std::vector<RefSpan> xs(w);
  for (int x = 0; x < w; ++x) xs[x] = ref_span(x, in.width, w);
  for (int y = 0; y < h; ++y) {
    const RefSpan sy = ref_span(y, in.height, h);
    for (int x = 0; x < w; ++x) {
      double v[4] = {0, 0, 0, 0};
      for (size_t j = 0; j < sy.weights.size(); ++j)
        for (size_t i = 0; i < xs[x].weights.size(); ++i) {
          const uint8_t* p = ref_px(in, xs[x].begin + int(i), sy.begin + int(j));
          for (int c = 0; c < 4; ++c) v[c] += sy.weights[j] * xs[x].weights[i] * p[c];
        }
      for (int c = 0; c < 4; ++c) out.pixels[(size_t(y) * w + x) * 4 + c] = uint8_t(std::floor(v[c] + 0.5));
    }
  }
  return out;
}

inline HostImage ref_scale(const HostImage& in, int w, int h, ScaleFilter f) {
  switch (f) {
    case ScaleFilter::nearest:
      return ref_nearest(in, w, h);
    case ScaleFilter::area:
      return ref_area(in, w, h);
    case ScaleFilter::bilinear:
      break;
  }
  return ref_bilinear(in, w, h);
}

inline const char* filter_name(ScaleFilter f) {
  return f == ScaleFilter::nearest ? "nearest" : f == ScaleFilter::area ? "area" : "bilinear";
}

// A scale stage made the way the pipeline makes it: from the descriptor's
// table, with the given values marked as written by the user.
inline std::unique_ptr<Stage> make_scale(const std::vector<std::pair<std::string, ParamValue>>& values) {
  const StageDescriptor d = make_scale_descriptor();
  Params p = default_params(d.params);
  for (const auto& [k, v] : values) {
    p.set(k, v);
    p.mark_given(k);
  }
  if (auto problem = d.validate(p)) throw std::runtime_error(*problem);
  return d.create(p);
}

inline std::unique_ptr<Stage> make_scale_to(int w, int h, ScaleFilter f) {
  return make_scale({{"width", int64_t(w)}, {"height", int64_t(h)}, {"filter", std::string(filter_name(f))}});
}

}  // namespace sp::test
