// The halftone stage's parameter table: the one place its parameters are declared.
#include <fmt/format.h>

#include <cmath>

#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_colour.h"

namespace sp::halftone {

namespace {

// (far_field_every - 1) * step: on a panning clip, 0.3 kept the tone, 0.4 lost it
// (blurred error 4x at step 0.1, every 5; 9x at step 0.4, every 3).
constexpr double kMaxFarFieldLag = 0.2;

ParamSpec row(std::string name, ParamType type, ParamValue def, std::optional<double> min, std::optional<double> max,
              std::string doc, bool optional_default = false) {
  return param_row(std::move(name), type, std::move(def), min, max, {}, std::move(doc), optional_default);
}

std::vector<ParamSpec> halftone_table() {
  using T = ParamType;
  return {
      row("dots_per_pixel", T::number, 0.25, 1e-4, 4.0,
          "Dots per unit of ink: M = round(sum of ink * dots_per_pixel), where a pixel's ink is 1 at the dot colour "
          "and 0 at the background (1 - luma on white). 1 = one dot per fully black pixel, as in the seed."),
      row("dots", T::integer, int64_t(0), 0.0, 16777216.0,
          "Explicit dot count M; 0 = from the ink sum and dots_per_pixel.", true),
      row("iterations", T::integer, int64_t(100), 0.0, 100000.0,
          "Iterations of p <- p + tau (F_attraction - F_repulsion) on a cold start (the first frame)."),
      row("video_iterations", T::integer, int64_t(8), 0.0, 100000.0,
          "Iterations per later frame, warm-started from the previous frame's dots: the most, when "
          "video_tolerance stops them earlier."),
      row("video_tolerance", T::number, 0.0, 0.0, 1.0,
          "A warm-started frame stops iterating once an iteration moved its dots by less than this RMS distance, "
          "in dot spacings (the spacing at full ink); it always runs one. 0 = always video_iterations. The test "
          "runs on the GPU, so the host never waits for it."),
      row("far_field_every", T::integer, int64_t(1), 1.0, 100.0,
          "Warm-started frames spread the dots and run the far field's FFTs on every k-th iteration only (the "
          "first of each frame included); the iterations between evaluate that field at the dots' new positions, "
          "and the near field is exact on each. 1 = every iteration, as the seed. The lag, (k - 1) * step, must "
          "stay within 0.2: beyond it the stale field drives the dots off (docs/perf.md, halftone v6)."),
      row("step", T::number, 0.1, 1e-4, 1.0,
          "Time step tau in units of the squared mean dot spacing at full ink (the seed's tau = 0.1 at one dot "
          "per pixel). Each move is also capped at one dot spacing."),
      row("shake", T::number, 0.5, 0.0, 5.0,
          "Shaking: random displacement (in dot spacings) at iteration 0, falling as (1 - k/iterations)^2; "
          "cold starts only. 0 = off."),
      row("shake_every", T::integer, int64_t(10), 1.0, 100000.0, "Shake on every k-th iteration."),
      row("seed", T::integer, int64_t(1), 0.0, 4294967295.0,
          "Seed of the counter-based random numbers (initial placement, shaking, warm-start births)."),
      row("accuracy_m", T::integer, int64_t(5), 2.0, double(kMaxCutoff),
          "NFFT window cut-off m (Kaiser-Bessel, 2m grid points per axis). The seed uses m = p = 5. At m = 3 the "
          "forces are 4e-5 off direct summation (1.5e-6 at 5) and the spread and interpolation ~2.5x cheaper; "
          "tone, dot motion and blue noise measured unchanged (docs/perf.md, halftone v8)."),
      row("accuracy_p", T::integer, int64_t(5), 2.0, double(kMaxTaylor),
          "Degree p of the two-point Taylor regularization near 0 and near the boundary; eps_I = p / N."),
      row("oversampling", T::number, 1.25, 1.25, 4.0,
          "NFFT oversampling sigma = n / N of the FFT grid. At m = 5 the forces are as accurate at 1.25 as at the "
          "seed's 2 (1.5e-6 relative to direct summation at 1080p), on a grid 0.39x the size."),
      row("near_neighbours", T::number, kDefaultNearNeighbours, 4.0, 400.0,
          "Mean number of neighbours inside the near-field radius eps_I at half ink (sets N: more neighbours, "
          "smaller FFT)."),
      row("dot_radius", T::number, 0.0, 0.0, 100.0,
          "Disc radius in pixels; 0 = area 1 / dots_per_pixel (a fully inked region is covered).", true),
      row("hold_distance", T::number, 0.0, 0.0, 4.0,
          "Video: a warm-started frame draws each dot where the last frame drew it until its particle has moved "
          "more than this many pixels from there. Only what is drawn holds still; the particles move as before. "
          "Still regions then repeat to the pixel (no flicker, blocks an encoder skips) instead of being redrawn "
          "by the relaxation's slow drift; moving ones follow the picture. It trades tone for stillness: 0.1 keeps "
          "the blurred error within ~10 % of the free run's, 0.3 adds ~60 % (docs/perf.md, halftone v11). "
          "0 = each dot where its particle is."),
      row("background", T::number_list, std::vector<double>{255, 255, 255}, 0.0, 255.0,
          "Background colour R, G, B (0..255)."),
      row("dot_color", T::number_list, std::vector<double>{0, 0, 0}, 0.0, 255.0, "Dot colour R, G, B (0..255)."),
      row("points_out", T::string, std::string(""), {}, {},
          "Also write the dots per frame: a path ending in .svg (one circle per dot) or .csv (x,y per dot, pixel "
          "units). '%d' (printf style, e.g. dots_%05d.svg) is replaced by the frame index, otherwise each frame "
          "overwrites the file. Written from the host after the frame.",
          true),
      param_row("channels", T::choice, std::string("mono"), {}, {}, {"mono", "cmy", "rgb"},
                "mono: one dot set from the luma, drawn in dot_color on background. cmy: colour stippling on "
                "white paper, one dot set per cyan, magenta and yellow ink (ink = 1 - R, 1 - G, 1 - B), each "
                "drawn in its ink; rgb: on black, one set per red, green and blue light (ink = R, G, B). "
                "Counts, dots_per_pixel and points_out (suffix _c/_m/_y or _r/_g/_b) apply per channel; "
                "background and dot_color are then unused."),
      param_row("repulsion", T::choice, std::string("fastsum"), {}, {}, {"fastsum", "direct"},
                "Repulsive forces by the NFFT fast summation (O(M log M)) or by direct O(M^2) summation (CPU: "
                "float64; CUDA: shared-memory tiles, float terms summed in double): the baseline of the seed's "
                "Table 1, too slow for use beyond ~10^5 dots."),
      param_row("neighbours", T::choice, std::string("cells"), {}, {}, {"cells", "lookup_map"},
                "CUDA near-field neighbour search: the cell table of the per-iteration sort, or the seed's lookup "
                "map (atomicExch insertion with displacement to the right, rebuilt every iteration). Same forces up "
                "to float summation order; the sort runs either way (the spread and the render need it). The CPU "
                "always uses the cell table."),
      row("seam_seconds", T::number, 0.5, 0.0, 10.0,
          "Segment-parallel runs (--jobs, plan): the dots are chaotic, so no warm-up leads a segment back to the "
          "arrangement its predecessor reached. Instead the worker before a seam also runs, for this long before "
          "it, the state the next segment starts, and hands its picture over to it blob by blob, so the seam "
          "changes no more than a frame does. 0 = no handover: the arrangement restarts at each seam, as at a "
          "scene cut. A single run is unaffected."),
      row("deterministic", T::boolean, false, {}, {},
          "CUDA: sum the far field's spread in fixed point, so that the same frames give the same dots to the bit, "
          "run after run and worker after worker (the float atomics of the default sum in an order that changes "
          "from run to run: where a dot sits on its keep threshold, the arrangements then part). The CPU always "
          "repeats. Needs neighbours: cells (the lookup map inserts in a changing order)."),
      row("profile", T::boolean, false, {}, {},
          "Time the phases. CUDA: events around attraction, sort, spread, FFT, interpolate, near field (with "
          "repulsion: direct, the whole direct sum), move and render on the first iteration of every frame, no "
          "host waits; CPU: clock around sort, far field, near field (or direct sum) and move on every iteration. "
          "The means go to the stage counters and to stderr when the stage ends."),
  };
}

std::array<double, 3> colour(const std::vector<double>& v) { return {v[0], v[1], v[2]}; }

double luma(const std::array<double, 3>& c) { return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; }

}  // namespace

Params halftone_default_params() { return default_params(halftone_table()); }

HalftoneSettings parse_halftone_params(const Params& p) {
  HalftoneSettings s;
  s.dots_per_pixel = p.get_number("dots_per_pixel");
  s.dots = int(p.get_int("dots"));
  s.iterations = int(p.get_int("iterations"));
  s.video_iterations = int(p.get_int("video_iterations"));
  s.video_tolerance = p.get_number("video_tolerance");
  s.far_field_every = int(p.get_int("far_field_every"));
  s.step = p.get_number("step");
  s.shake = p.get_number("shake");
  s.shake_every = int(p.get_int("shake_every"));
  s.seed = uint64_t(p.get_int("seed"));
  s.fastsum.m = int(p.get_int("accuracy_m"));
  s.fastsum.p = int(p.get_int("accuracy_p"));
  s.fastsum.sigma = p.get_number("oversampling");
  s.near_neighbours = p.get_number("near_neighbours");
  s.dot_radius = p.get_number("dot_radius");
  s.hold_distance = p.get_number("hold_distance");
  s.background = colour(p.get_list("background"));
  s.dot_color = colour(p.get_list("dot_color"));
  s.points_out = p.get_string("points_out");
  s.profile = p.get_bool("profile");
  s.seam_seconds = p.get_number("seam_seconds");
  s.deterministic = p.get_bool("deterministic");
  s.direct = p.get_string("repulsion") == "direct";
  s.lookup_map = p.get_string("neighbours") == "lookup_map";
  const std::string& channels = p.get_string("channels");
  s.channels = channels == "cmy" ? ColourMode::cmy : channels == "rgb" ? ColourMode::rgb : ColourMode::mono;
  return s;
}

CountRule count_rule(const HalftoneSettings& s, int capacity) {
  CountRule r;
  r.dots_per_pixel = s.dots_per_pixel;
  r.dots = s.dots;
  r.capacity = capacity;
  r.step = float(s.step);
  return r;
}

StageDescriptor make_halftone_descriptor() {
  StageDescriptor d;
  d.name = "halftone";
  d.summary =
      "Electrostatic halftoning / stippling (Gwosdek, Schmaltz, Weickert, Teuber 2011): dots attracted by the ink, "
      "repelling each other, NFFT fast summation; video warm-starts from the previous frame; optional CMY/RGB "
      "colour stippling";
  d.params = halftone_table();
  d.rules = {
      {"colours_are_rgb", "background and dot_color have three numbers each (R, G, B)."},
      {"ink_has_contrast", "With channels: mono, background and dot_color differ in brightness (luma) by 1 or more."},
      {"points_out_format", "points_out, when given, ends in .svg or .csv."},
      {"far_field_lag", "(far_field_every - 1) * step is at most 0.2."},
      {"deterministic_needs_cells", "deterministic: true goes with neighbours: cells."},
  };
  d.validate = [](const Params& p) -> std::optional<std::string> {
    for (const char* key : {"background", "dot_color"})
      if (p.get_list(key).size() != 3) return fmt::format("{} needs three numbers R, G, B", key);
    if (p.get_string("channels") == "mono" &&
        std::abs(luma(colour(p.get_list("background"))) - luma(colour(p.get_list("dot_color")))) < 1.0)
      return "background and dot_color need different brightness (the ink is measured between them)";
    const std::string& out = p.get_string("points_out");
    auto ends = [&](const char* e) { return out.size() >= 4 && out.compare(out.size() - 4, 4, e) == 0; };
    if (!out.empty() && !ends(".svg") && !ends(".csv")) return "points_out must end in .svg or .csv";
    if (p.get_bool("deterministic") && p.get_string("neighbours") == "lookup_map")
      return "deterministic needs neighbours: cells (the lookup map's insertions change order from run to run)";
    const int64_t every = p.get_int("far_field_every");
    if (double(every - 1) * p.get_number("step") > kMaxFarFieldLag + 1e-9)
      return fmt::format("far_field_every {} with step {} lags the far field by {:.2f} steps, over {} (fewer, or a "
                         "smaller step)",
                         every, p.get_number("step"), double(every - 1) * p.get_number("step"), kMaxFarFieldLag);
    return std::nullopt;
  };
  d.create = [](const Params& p) -> std::unique_ptr<Stage> {
    HalftoneSettings s = parse_halftone_params(p);
    if (s.channels != ColourMode::mono) return std::make_unique<ColourHalftoneStage>(s);
    return std::make_unique<HalftoneStage>(std::move(s));
  };
  return d;
}

static StageRegistration reg{make_halftone_descriptor()};

}  // namespace sp::halftone
