// The pencil stage's parameter table: the one place its parameters are declared.
#include <algorithm>
#include <filesystem>
#include <variant>

#include "stages/pencil/pencil.h"
#include "stages/pencil/pencil_math.h"
#include "stages/pencil/pencil_texture.h"

namespace sp::pencil {

namespace {

std::vector<ParamSpec> pencil_table() {
  using T = ParamType;
  return {
      param_row("color", T::boolean, false, {}, {}, {},
          "Colour pencil: replace the luma with the drawing and keep the chroma (Lu's colour version)."),
      param_row("gradient", T::choice, std::string("l1"), {}, {}, {"l1", "l2"},
          "Gradient of the median-filtered luma: l1 = |dx|+|dy| (the seed), l2 = Euclidean norm."),
      param_row("line_length", T::integer, int64_t(0), 0.0, 129.0, {},
          "Length in pixels of the 8 directional line kernels (odd; even values round up). "
          "0 = 1/30 of the smaller image side, as in the seed.",
          true),
      param_row("line_width", T::integer, int64_t(1), 0.0, double(kMaxHalfWidth), {},
          "Half-width in pixels of the drawing (second-pass) line kernels: Lu's `width`."),
      param_row("gamma_s", T::number, 1.0, 0.1, 10.0, {},
          "Stroke gamma: S = (1 - Sp)^gamma_s. Above 1 darkens and thickens the lines."),
      param_row("gamma_i", T::number, 0.6, 0.05, 5.0, {},
          "Tone gamma: R = S * T^gamma_i. Below 1 lightens the pencil shading."),
      param_row("tone", T::choice, std::string("lu2012"), {}, {}, {"lu2012", "dark", "light", "custom"},
          "Tone-layer weights bright:mid:dark. lu2012 = 52:37:11, dark = 42:29:29, light = 76:22:2, "
          "custom = `weights`."),
      param_row("weights", T::number_list, std::vector<double>{}, 0.0, 1000.0, {},
          "Explicit bright, mid, dark weights (three numbers, any scale); implies tone: custom.", true),
      [&] {
        ParamSpec s = param_row("texture", T::string, std::string("builtin"), {}, {}, {},
                          "Pencil texture: `builtin` (generated hatching, no asset needed) or an image path "
                          "(relative to the config file's directory).");
        s.config_relative_path = true;
        return s;
      }(),
      param_row("texture_mode", T::choice, std::string("tile"), {}, {}, {"tile", "stretch"},
          "How the texture covers the frame: tile at native size, or stretch to the frame. "
          "It stays fixed in screen space across frames."),
      param_row("tone_solve", T::choice, std::string("fast"), {}, {}, {"fast", "lu2012"},
          "Texture exponent beta: fast = closed form beta = ln J * E[ln H]/E[ln^2 H]; "
          "lu2012 = Lu's smooth beta (eq. 9) by conjugate gradients."),
      param_row("lambda", T::number, 0.2, 0.0, 100.0, {}, "Smoothness weight of Lu's beta objective (lu2012)."),
      param_row("cg_tolerance", T::number, 1e-4, 1e-8, 0.1, {},
          "Relative residual ||r||/||b|| at which the conjugate gradient solve stops (lu2012)."),
      param_row("cg_max_iterations", T::integer, int64_t(100), 1.0, 2000.0, {},
          "Iteration cap of the conjugate gradient solve (lu2012)."),
      param_row("temporal_smoothing", T::number, 0.0, 0.0, 0.99, {},
          "Video: EMA factor a of the source histogram, h = a h_prev + (1-a) h_frame, against "
          "tone flicker. 0 = each frame on its own."),
  };
}

template <class V>
const V* find_value(const Params& p, const std::string& name) {
  auto it = p.values().find(name);
  return it == p.values().end() ? nullptr : std::get_if<V>(&it->second);
}

// Reads through values() so the stage does not depend on the loader's getters.
bool read_bool(const Params& p, const std::string& n, bool def) {
  const bool* v = find_value<bool>(p, n);
  return v ? *v : def;
}
int64_t read_int(const Params& p, const std::string& n, int64_t def) {
  if (const int64_t* v = find_value<int64_t>(p, n)) return *v;
  if (const double* d = find_value<double>(p, n)) return int64_t(*d);
  return def;
}
double read_number(const Params& p, const std::string& n, double def) {
  if (const double* v = find_value<double>(p, n)) return *v;
  if (const int64_t* i = find_value<int64_t>(p, n)) return double(*i);
  return def;
}
std::string read_string(const Params& p, const std::string& n, const std::string& def) {
  const std::string* v = find_value<std::string>(p, n);
  return v ? *v : def;
}
std::vector<double> read_list(const Params& p, const std::string& n) {
  const std::vector<double>* v = find_value<std::vector<double>>(p, n);
  return v ? *v : std::vector<double>{};
}

std::optional<std::string> validate_pencil(const Params& p) {
  const int64_t length = read_int(p, "line_length", 0);
  if (length != 0 && length < 3) return "line_length: must be 0 (auto) or at least 3, got " + std::to_string(length);
  const std::vector<double> w = read_list(p, "weights");
  const std::string tone = read_string(p, "tone", "lu2012");
  if (!w.empty()) {
    if (w.size() != 3) return "weights: needs three numbers (bright, mid, dark), got " + std::to_string(w.size());
    for (double v : w)
      if (v < 0) return "weights: must not be negative";
    if (w[0] + w[1] + w[2] <= 0) return "weights: must not all be zero";
    if (tone != "custom" && p.given("tone")) return "weights: conflicts with tone: " + tone + " (use tone: custom)";
  } else if (tone == "custom") {
    return "tone: custom needs `weights: [bright, mid, dark]`";
  }
  const std::string texture = read_string(p, "texture", "builtin");
  std::error_code ec;
  if (texture != "builtin" && !std::filesystem::exists(texture, ec)) return "texture: no such file '" + texture + "'";
  if (texture != "builtin" && !std::filesystem::is_regular_file(texture, ec))
    return "texture: '" + texture + "' is not a regular file (an image file is needed)";
  return std::nullopt;
}

}  // namespace

Params pencil_default_params() {
  Params p;
  for (const ParamSpec& s : pencil_table()) p.set(s.name, s.default_value);
  return p;
}

PencilParams parse_pencil_params(const Params& p) {
  PencilParams r;
  r.color = read_bool(p, "color", r.color);
  r.gradient = read_string(p, "gradient", "l1") == "l2" ? GradientForm::l2 : GradientForm::l1;
  r.line_length = int(read_int(p, "line_length", 0));
  r.line_width = int(read_int(p, "line_width", r.line_width));
  r.gamma_s = read_number(p, "gamma_s", r.gamma_s);
  r.gamma_i = read_number(p, "gamma_i", r.gamma_i);
  const std::vector<double> w = read_list(p, "weights");
  if (w.size() == 3) r.tone_weights = {w[0], w[1], w[2]};
  else tone_preset(read_string(p, "tone", "lu2012").c_str(), &r.tone_weights);
  r.texture = read_string(p, "texture", r.texture);
  r.texture_mode = read_string(p, "texture_mode", "tile") == "stretch" ? TextureMode::stretch : TextureMode::tile;
  r.tone_solve = read_string(p, "tone_solve", "fast") == "lu2012" ? ToneSolve::lu2012 : ToneSolve::fast;
  r.lambda = read_number(p, "lambda", r.lambda);
  r.cg_tolerance = read_number(p, "cg_tolerance", r.cg_tolerance);
  r.cg_max_iterations = int(read_int(p, "cg_max_iterations", r.cg_max_iterations));
  r.temporal_smoothing = read_number(p, "temporal_smoothing", r.temporal_smoothing);
  return r;
}

int resolve_line_length(int line_length, Size size) {
  int length = line_length > 0 ? line_length : std::min(size.width, size.height) / 30;
  length = std::clamp(length, 3, 2 * kMaxHalfLength + 1);
  return length | 1;
}

StageDescriptor make_pencil_descriptor() {
  StageDescriptor d;
  d.name = "pencil";
  d.summary = "Pencil drawing (Lu, Xu, Jia 2012): directional strokes times a histogram-matched pencil texture";
  d.params = pencil_table();
  d.rules = {
      {"line_length_auto_or_3", "line_length is 0 (auto) or 3 and more."},
      {"weights_three_not_all_zero", "weights, when given, has three numbers that are not all zero."},
      {"weights_with_custom_tone",
       "weights and a tone other than custom are not both given; tone: custom needs weights."},
      {"texture_exists", "texture is builtin or names an existing file (relative to the config's directory)."},
  };
  d.validate = validate_pencil;
  d.create = [](const Params& p) -> std::unique_ptr<Stage> {
    return std::make_unique<PencilStage>(parse_pencil_params(p));
  };
  d.prepare_host = [](const Params& p) {
    if (parse_pencil_params(p).texture == "builtin") builtin_texture();
  };
  return d;
}

}  // namespace sp::pencil
