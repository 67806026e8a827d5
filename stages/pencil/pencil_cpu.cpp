#include "stages/pencil/pencil_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "pipeline/parallel.h"
#include "stages/pencil/pencil_math.h"

namespace sp::pencil::cpu {

namespace {

// Rows of chunk c out of `chunks` over `height` rows.
int chunk_row(int c, int chunks, int height) { return int(int64_t(c) * height / chunks); }

template <class Fn>
void for_chunks(int chunks, int height, Fn&& fn) {
  parallel_for(chunks, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) fn(c, chunk_row(c, chunks, height), chunk_row(c + 1, chunks, height));
  });
}

// acc[x] += w * f(src[x + dx]) over the x where x + dx is inside the row.
// 16 x 16 -> 32-bit products, a widening multiply the compiler vectorizes with SSE2.
template <class Fn>
void accumulate_row(uint32_t* acc, const uint16_t* src_row, int width, int dx, uint16_t w, Fn&& f) {
  const int xs = std::max(0, -dx), xe = std::min(width, width - dx);
  const uint16_t* src = src_row + dx;
  for (int x = xs; x < xe; ++x) acc[x] += uint32_t(w) * uint32_t(uint16_t(f(src[x])));
}

// One direction's kernel applied to row y: acc += kernel * f(src).
template <class Fn>
void apply_direction(const LineKernelSet& k, int d, const uint16_t* src, int width, int height, int y,
                     uint32_t* acc, Fn&& f) {
  for (int i = k.begin[d]; i < k.begin[d + 1]; ++i) {
    const LineRun& run = k.runs[i];
    for (int j = 0; j < run.len; ++j) {
      const int sy = y + run.lo + j;
      const uint16_t w = k.weights[run.offset + j];
      if (sy < 0 || sy >= height || w == 0) continue;
      accumulate_row(acc, src + size_t(sy) * width, width, run.dx, w, f);
    }
  }
}

}  // namespace

void RowScratch::resize(int chunk_count, int row_width) {
  chunks = chunk_count;
  width = row_width;
  acc.assign(size_t(chunks) * width, 0);
  best.assign(size_t(chunks) * width, 0);
  direction.assign(size_t(chunks) * width, 0);
  counts.assign(size_t(chunks) * 256, 0);
  range.assign(size_t(chunks) * 2, 0);
}

void luma_histogram(const RgbaView& in, uint8_t* luma, uint32_t* counts, RowScratch& s) {
  const int chunks = std::min(s.chunks, std::max(1, in.height));
  for_chunks(chunks, in.height, [&](int c, int y0, int y1) {
    uint32_t* hist = &s.counts[size_t(c) * 256];
    std::fill(hist, hist + 256, 0u);
    for (int y = y0; y < y1; ++y) {
      const uint32_t* row = in.row32(y);
      uint8_t* out = luma + size_t(y) * in.width;
      for (int x = 0; x < in.width; ++x) {
        const int v = luma8_rgba(row[x]);
        out[x] = uint8_t(v);
        ++hist[v];
      }
    }
  });
  std::fill(counts, counts + 256, 0u);
  for (int c = 0; c < chunks; ++c)
    for (int v = 0; v < 256; ++v) counts[v] += s.counts[size_t(c) * 256 + v];
}

void median_gradient(const uint8_t* luma, int w, int h, GradientForm form, uint8_t* median, uint16_t* gradient) {
  parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const uint8_t* up = luma + size_t(std::max(y - 1, 0)) * w;
      const uint8_t* mid = luma + size_t(y) * w;
      const uint8_t* down = luma + size_t(std::min(y + 1, h - 1)) * w;
      for (int x = 0; x < w; ++x) {
        const int l = std::max(x - 1, 0), r = std::min(x + 1, w - 1);
        median[size_t(y) * w + x] =
            uint8_t(median9(up[l], up[x], up[r], mid[l], mid[x], mid[r], down[l], down[x], down[r]));
      }
    }
  });
  parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const uint8_t* m = median + size_t(y) * w;
      const uint8_t* below = y + 1 < h ? m + w : nullptr;
      for (int x = 0; x < w; ++x) {
        const int dx = x + 1 < w ? int(m[x]) - int(m[x + 1]) : 0;
        const int dy = below ? int(m[x]) - int(below[x]) : 0;
        gradient[size_t(y) * w + x] = uint16_t(form == GradientForm::l1 ? gradient_l1(dx, dy) : gradient_l2(dx, dy));
      }
    }
  });
}

void classify(const uint16_t* gradient, int w, int h, const LineKernelSet& k, uint16_t* classified, RowScratch& s) {
  const int chunks = std::min(s.chunks, std::max(1, h));
  for_chunks(chunks, h, [&](int c, int y0, int y1) {
    uint32_t* acc = &s.acc[size_t(c) * w];
    uint32_t* best = &s.best[size_t(c) * w];
    uint8_t* dir = &s.direction[size_t(c) * w];
    for (int y = y0; y < y1; ++y) {
      for (int d = 0; d < kDirections; ++d) {
        std::fill(acc, acc + w, 0u);
        apply_direction(k, d, gradient, w, h, y, acc, [](uint16_t v) { return v; });
        for (int x = 0; x < w; ++x) {
          if (d == 0 || acc[x] > best[x]) {
            best[x] = acc[x];
            dir[x] = uint8_t(d);
          }
        }
      }
      for (int x = 0; x < w; ++x) classified[size_t(y) * w + x] = pack_classified(gradient[size_t(y) * w + x], dir[x]);
    }
  });
}

void draw(const uint16_t* classified, int w, int h, const LineKernelSet& k, uint32_t* sp, uint32_t range[2],
          RowScratch& s) {
  const int chunks = std::min(s.chunks, std::max(1, h));
  for_chunks(chunks, h, [&](int c, int y0, int y1) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (int y = y0; y < y1; ++y) {
      uint32_t* acc = sp + size_t(y) * w;
      std::fill(acc, acc + w, 0u);
      for (int d = 0; d < kDirections; ++d)
        apply_direction(k, d, classified, w, h, y, acc, [d](uint16_t v) { return uint16_t(classified_direction(v) == d ? v & kGradientMask : 0); });
      for (int x = 0; x < w; ++x) {
        lo = std::min(lo, acc[x]);
        hi = std::max(hi, acc[x]);
      }
    }
    s.range[size_t(c) * 2] = lo;
    s.range[size_t(c) * 2 + 1] = hi;
  });
  range[0] = UINT32_MAX;
  range[1] = 0;
  for (int c = 0; c < chunks; ++c) {
    range[0] = std::min(range[0], s.range[size_t(c) * 2]);
    range[1] = std::max(range[1], s.range[size_t(c) * 2 + 1]);
  }
}

void ln_level_table(float* ln_level) {
  for (int t = 0; t < kLevels; ++t) ln_level[t] = float(std::log(t == 0 ? 0.5 / 255.0 : t / 255.0));
}

void tone_levels(const uint32_t* counts, double pixels, double ema_factor, bool have_history, double* ema_state,
                 const ToneTarget& target, const float* ln_level, float* ln_j_by_luma) {
  for (int g = 0; g < kLevels; ++g) update_source_histogram(counts, pixels, ema_factor, have_history, ema_state, g);
  double source_cdf[kLevels];
  cumulate(ema_state, source_cdf);
  for (int g = 0; g < kLevels; ++g) ln_j_by_luma[g] = ln_level[match_level(source_cdf, target.cdf.data(), g)];
}

void combine(const RgbaView& in, const RgbaView& out, const CombineInputs& c) {
  const PencilTexture& tex = *c.texture;
  parallel_for(in.height, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const uint32_t* src = in.row32(y);
      uint32_t* dst = out.row32(y);
      const size_t base = size_t(y) * in.width;
      for (int x = 0; x < in.width; ++x) {
        const uint32_t px = src[x];
        const float ln_j = c.ln_j_by_luma[luma8_rgba(px)];
        const float beta = c.beta ? c.beta[base + x] : mul_rn(c.fast_beta_scale, ln_j);
        const float ln_h = tex.ln_table[tex.texels[texture_index(x, y, tex.width, tex.height)]];
        const float s = stroke_value(c.sp[base + x], c.sp_lo, c.sp_hi, c.gamma_s);
        const float t = texture_value(beta, ln_h, c.gamma_i);
        dst[x] = output_pixel(px, mul_rn(s, t), c.color);
      }
    }
  });
}

}  // namespace sp::pencil::cpu

namespace {
const sp::StageRegistration pencil_registration{sp::pencil::make_pencil_descriptor()};
}  // namespace
