// The stage's configure and its CPU backend: ink, attraction field, cold or
// warm start, iterations of the particle system, rendering.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "pipeline/errors.h"
#include "pipeline/log.h"
#include "pipeline/parallel.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_profile.h"

namespace sp::halftone {

struct HalftoneStage::Cpu {
  AttractionPlan attraction_plan;
  std::unique_ptr<AttractionCpu> attraction;
  std::unique_ptr<FastsumCpu> fastsum;
  std::vector<float> ink, old_ink, field_x, field_y;
  std::vector<double> row_sums;
  std::vector<double> growth_cdf;  // warm births: prefix sums of the ink's growth
  std::vector<float2> pos, force;
  std::vector<float2> drawn;    // hold_distance: where each dot is drawn, in the particles' order
  std::vector<float> moved_sq;  // per dot, the last iteration's squared move
  std::vector<uint8_t> keep;
  std::vector<double> direct_x, direct_y;  // repulsion: direct (float64 sums)
  FrameNumbers numbers;
  CpuProfile profile;
};

void CpuProfile::lap(int phase) {
  const auto now = std::chrono::steady_clock::now();
  ms[phase] += std::chrono::duration<double, std::milli>(now - last).count();
  last = now;
}

void CpuProfile::print() const {
  if (iterations == 0) return;
  std::fprintf(stderr, "halftone profile (cpu): %d dots, %d iterations, ms per iteration %.4f:", dots, iterations,
               (ms[0] + ms[1] + ms[2] + ms[3]) / iterations);
  for (int i = 0; i < kPhases; ++i) std::fprintf(stderr, " %s %.4f", kPhaseNames[i], ms[i] / iterations);
  std::fprintf(stderr, "\n");
}

HalftoneStage::HalftoneStage(HalftoneSettings settings) : settings_(std::move(settings)) {}

// The cold start (shaken, `iterations` steps) falls on a discarded frame, so a
// segment's first frame is warm-started like every other; with a handover,
// the state starts seam_seconds before the segment (warmup_seconds).
int HalftoneStage::warmup_frames() const { return 1; }

HalftoneStage::~HalftoneStage() {
  if (cpu_ && settings_.profile) cpu_->profile.print();
  release_cuda();
}

Size HalftoneStage::configure(Size input, Backend backend, ScratchAllocator& scratch) {
  if (input.width < 2 || input.height < 2) throw Error(ExitCode::config, "halftone: frame smaller than 2x2");
  // The kernel spectra make configure the stage's start-up: its time, for
  // issue 15 (the first frame waits for it).
  const auto start = std::chrono::steady_clock::now();
  size_ = input;
  backend_ = backend;
  frames_done_ = 0;
  last_time_.reset();
  const double pixels = double(input.width) * input.height;
  capacity_ = settings_.dots > 0 ? settings_.dots : int(std::ceil(pixels * settings_.dots_per_pixel)) + 1;
  // Reference density for the near-field radius: the explicit count, or half ink.
  const double density = settings_.dots > 0 ? settings_.dots / pixels : 0.5 * settings_.dots_per_pixel;
  FastsumSettings fs = settings_.fastsum;
  fs.near_radius_px = std::sqrt(settings_.near_neighbours / (M_PI * density));
  plan_ = make_fastsum_plan(input.width, input.height, fs);
  // Densest expected dots (full ink): dots_per_pixel, or twice the mean for an explicit count.
  map_slot_px_ = float(1.0 / std::sqrt(settings_.dots > 0 ? 2.0 * settings_.dots / pixels : settings_.dots_per_pixel));
  const double area = settings_.dots > 0 ? pixels / settings_.dots : 1.0 / settings_.dots_per_pixel;
  dot_radius_ = float(settings_.dot_radius > 0 ? settings_.dot_radius : std::sqrt(area / M_PI));
  if (backend == Backend::cpu) {
    release_cuda();
    cpu_ = std::make_unique<Cpu>();
    Cpu& c = *cpu_;
    c.attraction_plan = make_attraction_plan(input.width, input.height);
    c.attraction = std::make_unique<AttractionCpu>(c.attraction_plan);
    c.fastsum = std::make_unique<FastsumCpu>(plan_, capacity_);
    const size_t n = size_t(input.width) * input.height;
    c.ink.assign(n, 0.f);
    c.old_ink.assign(n, 0.f);
    c.field_x.assign(n, 0.f);
    c.field_y.assign(n, 0.f);
    c.row_sums.assign(input.height, 0.0);
    c.growth_cdf.assign(n, 0.0);
    c.pos.assign(capacity_, {0.f, 0.f});
    c.force.assign(capacity_, {0.f, 0.f});
    c.moved_sq.assign(capacity_, 0.f);
    if (holds_dots()) c.drawn.assign(capacity_, {0.f, 0.f});
    c.keep.assign(capacity_, 0);
    if (settings_.direct) {
      c.direct_x.assign(capacity_, 0.0);
      c.direct_y.assign(capacity_, 0.0);
    }
    c.numbers = {};
  } else {
    cpu_.reset();
    configure_cuda(scratch);  // returns once the device's kernel spectra are made
  }
  if (next_) {
    next_->configure(input, backend, scratch);
    const HandoverField field = handover_field(0.f);
    handover_quantiles_ = std::make_unique<HandoverQuantiles>(field.seed, field.inv_cell);
  }
  log_debug("halftone: configure {}x{} ({}) took {:.1f} ms (kernel N = {}, grid n = {}; CUDA: fast summation {:.1f} ms, "
            "attraction {:.1f} ms, buffers {:.1f} ms{})",
            input.width, input.height, backend == Backend::cpu ? "cpu" : "cuda",
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), plan_.N,
            plan_.n, configure_ms_[0], configure_ms_[1], configure_ms_[2], next_ ? ", with the next state's" : "");
  return input;
}

namespace {

// Inclusive prefix sums of ink_growth, in pixel order; returns the total.
double growth_prefix_sums(const std::vector<float>& ink, const std::vector<float>& old_ink, std::vector<double>& cdf) {
  double sum = 0;
  for (size_t i = 0; i < ink.size(); ++i) cdf[i] = sum += ink_growth(ink.data(), old_ink.data(), i);
  return sum;
}

InkScale ink_scale(const HalftoneSettings& s) {
  InkScale k;
  double weight[3] = {0.2126, 0.7152, 0.0722};
  if (s.ink_channel >= 0)
    for (int c = 0; c < 3; ++c) weight[c] = c == s.ink_channel ? 1.0 : 0.0;
  for (int c = 0; c < 3; ++c) k.weight[c] = float(weight[c]);
  auto level = [&](const std::array<double, 3>& c) { return weight[0] * c[0] + weight[1] * c[1] + weight[2] * c[2]; };
  const double bg = level(s.background), dot = level(s.dot_color);
  k.background_luma = float(bg);
  k.inv_contrast = float(1.0 / (dot - bg));
  return k;
}

}  // namespace

RenderParams render_params(const HalftoneSettings& s, float radius) {
  RenderParams r;
  // The one-pixel coverage ramp of a disc of radius R inks pi (R^2 + 1/12)
  // pixels: shrink R so that each dot inks its nominal area pi R^2.
  r.radius = std::sqrt(std::max(radius * radius - 1.f / 12.f, 0.0625f));
  for (int c = 0; c < 3; ++c) {
    r.background[c] = float(s.background[c]);
    r.dot[c] = float(s.dot_color[c]);
  }
  return r;
}

InkScale stage_ink_scale(const HalftoneSettings& s) { return ink_scale(s); }

void HalftoneStage::process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) {
  const SeamStep step = seam_step(frame.time_seconds);
  if (step.before_own_state) {  // its output is discarded: the cheapest picture will do
    for (int y = 0; y < size_.height; ++y) std::memcpy(out.row(y), in.row(y), size_t(size_.width) * 4);
    return;
  }
  if (step.handing_over) next_->advance_cpu(in);
  advance_cpu(in);
  Cpu& c = *cpu_;
  const int w = size_.width, h = size_.height;
  const RenderParams rp = render_params(settings_, dot_radius_);
  const auto cells = [&](const Cpu& of) {
    return CellGrid{of.fastsum->cell_start().data(), plan_.cells_x, plan_.cells_y, plan_.cell_w, plan_.cell_h,
                    float(settings_.hold_distance)};
  };
  const auto render_rows = [&](auto pixel) {
    parallel_for(h, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y)
        for (int x = 0; x < w; ++x) out.row32(y)[x] = pixel(x, y);
    });
  };
  const CellGrid own = cells(c);
  const auto dots = [&](const Cpu& of) { return holds_dots() ? of.drawn.data() : of.pos.data(); };
  if (step.handing_over) {
    const Cpu& next = *next_->cpu_;
    const CellGrid next_cells = cells(next);
    const HandoverField field = handover_field(step.threshold);
    render_rows([&](int x, int y) {
      return render_handover_pixel(x, y, dots(c), own, dots(next), next_cells, rp, field);
    });
  } else {
    render_rows([&](int x, int y) { return render_pixel(x, y, dots(c), own, rp); });
  }
  if (!settings_.points_out.empty())
    write_points(settings_.points_out, frame.index, dots(c), c.numbers.count, size_, dot_radius_,
                 settings_.background, settings_.dot_color);
}

void HalftoneStage::advance_cpu(const RgbaView& in) {
  Cpu& c = *cpu_;
  const int w = size_.width, h = size_.height;
  const InkScale scale = ink_scale(settings_);
  parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const uint32_t* row = in.row32(y);
      double sum = 0;
      for (int x = 0; x < w; ++x) sum += c.ink[size_t(y) * w + x] = pixel_ink(row[x], scale);
      c.row_sums[y] = sum;
    }
  });
  double ink_sum = 0;
  for (double s : c.row_sums) ink_sum += s;

  const CountRule rule = count_rule(settings_, capacity_);
  const uint64_t seed = frame_seed(settings_.seed, frames_done_);
  const bool warm = frames_done_ > 0;
  const bool hold = holds_dots();
  float2* drawn = hold ? c.drawn.data() : nullptr;
  int kept = 0;
  if (warm) {
    for (int i = 0; i < c.numbers.count; ++i)
      if (keep_particle(c.pos[i], c.ink.data(), c.old_ink.data(), w, h, seed, uint32_t(i))) {
        if (hold) drawn[kept] = drawn[i];
        c.pos[kept++] = c.pos[i];
      }
  }
  c.numbers = frame_numbers(rule, ink_sum, kept, c.numbers);
  FrameNumbers& f = c.numbers;
  if (kept > f.count)  // slot <= j: in place, in order
    for (int j = 0; j < kept; ++j) {
      if (surplus_dropped(j, kept, f.count)) continue;
      const int slot = survivor_slot(j, kept, f.count);
      c.pos[slot] = c.pos[j];
      if (hold) drawn[slot] = drawn[j];
    }
  const bool by_growth = warm && f.count > f.kept && growth_prefix_sums(c.ink, c.old_ink, c.growth_cdf) > 0;
  parallel_for(std::max(0, f.count - f.kept), [&](int b, int e) {
    for (int i = f.kept + b; i < f.kept + e; ++i) {
      c.pos[i] = by_growth ? sample_by_growth(c.growth_cdf.data(), w, h, seed, uint32_t(i))
                           : sample_particle(c.ink.data(), w, h, seed, kStreamInit, uint32_t(i));
      if (hold) drawn[i] = c.pos[i];
    }
  }, 256);

  if (f.count > 0) {
    c.attraction->compute(c.ink.data(), f.lambda, c.field_x.data(), c.field_y.data());
    const int most = warm ? settings_.video_iterations : settings_.iterations;
    const float tolerance = warm ? float(settings_.video_tolerance) : 0.f;
    CpuProfile& pr = c.profile;
    pr.last = std::chrono::steady_clock::now();
    int k = 0;
    for (double moved_sq = 0; keep_iterating(k, most, moved_sq, f.count, f.spacing, tolerance); ++k) {
      const bool lagged = lagged_iteration(warm, k);
      if (!lagged) c.fastsum->sort(c.pos.data(), f.count, drawn);
      pr.lap(0);
      if (settings_.direct) {
        pr.lap(1);
        direct_forces(c.pos.data(), f.count, c.direct_x.data(), c.direct_y.data());
        for (int i = 0; i < f.count; ++i) c.force[i] = make_float2(float(c.direct_x[i]), float(c.direct_y[i]));
      } else {
        if (lagged)
          c.fastsum->far_field_of_last_spread(c.pos.data(), f.count, c.force.data());
        else
          c.fastsum->far_field(c.pos.data(), f.count, c.force.data());
        pr.lap(1);
        c.fastsum->add_near_field(c.pos.data(), f.count, c.force.data());
      }
      pr.lap(2);
      const float shake = warm ? 0.f : shake_amplitude(settings_, k, f.spacing);
      parallel_for(f.count, [&](int b, int e) {
        for (int i = b; i < e; ++i) {
          float2 a;
          sample_field(c.field_x.data(), c.field_y.data(), w, h, c.pos[i].x, c.pos[i].y, a.x, a.y);
          const float2 p = move_particle(c.pos[i], c.force[i], a, f.step_px, f.spacing, shake, seed, uint32_t(i),
                                         uint32_t(k), w, h);
          if (tolerance > 0.f) c.moved_sq[i] = squared_move(c.pos[i], p);
          c.pos[i] = p;
        }
      }, 256);
      if (tolerance > 0.f) {  // in index order: the same sum for any thread count
        moved_sq = 0;
        for (int i = 0; i < f.count; ++i) moved_sq += c.moved_sq[i];
      }
      pr.lap(3);
    }
    f.iterations = k;
    if (warm) {
      ++f.warm_frames;
      f.warm_iterations += k;
    }
    pr.iterations += k;
    pr.dots = f.count;
    c.fastsum->sort(c.pos.data(), f.count, drawn);
    if (hold) {
      const float distance = warm ? float(settings_.hold_distance) : 0.f;
      for (int i = 0; i < f.count; ++i) drawn[i] = drawn_position(c.pos[i], drawn[i], distance);
    }
  } else {
    c.fastsum->sort(c.pos.data(), 0);
  }
  std::swap(c.ink, c.old_ink);
  ++frames_done_;
}

float shake_amplitude(const HalftoneSettings& s, int k, float spacing) {
  if (s.shake <= 0 || k == 0 || k % s.shake_every != 0 || s.iterations <= 0) return 0.f;
  const double left = 1.0 - double(k) / s.iterations;
  return float(s.shake * spacing * left * left);
}

std::vector<float2> HalftoneStage::particles() const {
  if (cpu_) return {cpu_->pos.begin(), cpu_->pos.begin() + cpu_->numbers.count};
  return particles_cuda();
}

FrameNumbers HalftoneStage::numbers() const { return cpu_ ? cpu_->numbers : numbers_cuda(); }

double HalftoneStage::floor_bytes(Size in, Size out) const {
  // Per iteration and particle: the spread touches (2m)^2 grid floats (read +
  // write), the interpolation reads (2m)^2 complex values; the FFTs pass the
  // n^2 grid a few times. Counted at the frame's iteration count.
  // A lagged iteration (far_field_every) interpolates but neither spreads nor transforms.
  const double m2 = 4.0 * plan_.window.m * plan_.window.m;
  const double lagged = capacity_ * 0.5 * (m2 * 8 + 64);
  const double full = lagged + capacity_ * 0.5 * m2 * 8 + double(plan_.grid_points()) * 8 * 6;
  const bool warm = frames_done_ > 1;
  const int iterations = warm ? settings_.video_iterations : settings_.iterations;
  const int spread = warm ? (iterations + settings_.far_field_every - 1) / settings_.far_field_every : iterations;
  return Stage::floor_bytes(in, out) + full * spread + lagged * (iterations - spread);
}

StageCounters HalftoneStage::counters() const {
  const FrameNumbers f = cpu_ ? cpu_->numbers : numbers_cuda();
  StageCounters c = {{"dots", double(f.count)},
                      {"dots_kept", double(f.kept)},
                      {"grid_n", double(plan_.n)},
                      {"kernel_N", double(plan_.N)},
                      {"near_radius_px", double(plan_.near.eps)},
                      {"iterations_last", double(f.iterations)}};
  if (f.warm_frames > 0) c["iterations_warm_mean"] = double(f.warm_iterations) / double(f.warm_frames);
  if (!cpu_) {
    add_profile_counters(c);
  } else if (const CpuProfile& pr = cpu_->profile; settings_.profile && pr.iterations > 0) {
    c["ms_iteration"] = (pr.ms[0] + pr.ms[1] + pr.ms[2] + pr.ms[3]) / pr.iterations;
    for (int i = 0; i < CpuProfile::kPhases; ++i)
      c[std::string("ms_") + CpuProfile::kPhaseNames[i]] = pr.ms[i] / pr.iterations;
  }
  return c;
}

}  // namespace sp::halftone
