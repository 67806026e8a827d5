// End-to-end: `stylepipe preview` against independent oracles. Each tile,
// cropped from the PNG by the rectangle the command reports, must equal the
// frame at that time of a separate `stylepipe run` of the same variant (its
// own YAML, written here, not through --vary), stored losslessly as raw RGBA;
// the original tile must equal the generated input frame. The PNG is decoded
// by the ffmpeg command-line tool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

struct Picture {  // packed pixels, `channels` bytes each
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> bytes;
  const uint8_t* at(int x, int y) const { return bytes.data() + (size_t(y) * width + x) * channels; }
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Random 8x8 blocks plus noise, brighter or darker as a whole from frame to
// frame (so a temporal tone state matters), never constant. Returns the raw
// RGBA frames and writes them as a lossless FFV1 (bgr0) clip at 10 fps.
std::vector<Picture> make_random_clip(const TempDir& dir, const std::string& name, int width, int height,
                                      int frames, std::mt19937_64& rng) {
  std::vector<Picture> pictures;
  std::vector<uint8_t> raw;
  std::vector<int> blocks(size_t((width / 8 + 1) * (height / 8 + 1)) * 3);
  for (int& b : blocks) b = int(rng() % 256);
  for (int f = 0; f < frames; ++f) {
    Picture p{width, height, 4, std::vector<uint8_t>(size_t(width) * height * 4)};
    const int shift = int(rng() % 161) - 80;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        for (int c = 0; c < 3; ++c) {
          const int block = blocks[size_t(((y / 8) * (width / 8 + 1) + x / 8) * 3 + c)];
          p.bytes[(size_t(y) * width + x) * 4 + c] = uint8_t(std::clamp(block + shift + int(rng() % 41) - 20, 0, 255));
        }
    for (size_t i = 3; i < p.bytes.size(); i += 4) p.bytes[i] = 255;
    raw.insert(raw.end(), p.bytes.begin(), p.bytes.end());
    pictures.push_back(std::move(p));
  }
  const std::string raw_path = dir.file(name + ".rgba");
  std::ofstream(raw_path, std::ios::binary).write(reinterpret_cast<const char*>(raw.data()), std::streamsize(raw.size()));
  const CommandResult r = run_command("ffmpeg -hide_banner -v error -y -f rawvideo -pix_fmt rgba -s " +
                                      std::to_string(width) + "x" + std::to_string(height) + " -r 10 -i " +
                                      shell_quote(raw_path) + " -c:v ffv1 -pix_fmt bgr0 " + shell_quote(dir.file(name)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return pictures;
}

Picture decode_png(const std::string& path, int width, int height) {
  const std::string raw = path + ".rgb";
  const CommandResult r = run_command("ffmpeg -hide_banner -v error -y -i " + shell_quote(path) +
                                      " -f rawvideo -pix_fmt rgb24 " + shell_quote(raw));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  Picture p{width, height, 3, read_bytes(raw)};
  EXPECT_EQ(p.bytes.size(), size_t(width) * height * 3) << path << " is not " << width << "x" << height;
  return p;
}

// Frame `index` of a separate run of `config`, written as raw RGBA (lossless).
Picture run_frame(const std::string& config, const std::string& input, int index, int width,
                  int height, const std::string& extra = "", const std::string& backend = "cpu") {
  const std::string out = config + ".out.rgba";
  const CommandResult r = stylepipe("run " + shell_quote(config) + " -i " + shell_quote(input) + " " + extra +
                                    " -f rawvideo --pix-fmt rgba -o " + shell_quote(out) + " --backend " + backend + " -y");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::vector<uint8_t> all = read_bytes(out);
  const size_t frame_bytes = size_t(width) * height * 4;
  Picture p{width, height, 4, {}};
  if (all.size() >= (size_t(index) + 1) * frame_bytes)
    p.bytes.assign(all.begin() + std::ptrdiff_t(index * frame_bytes), all.begin() + std::ptrdiff_t((index + 1) * frame_bytes));
  else
    ADD_FAILURE() << config << ": the run has no frame " << index << " of " << width << "x" << height;
  return p;
}

// Largest difference of R, G and B between a tile of the sheet and an RGBA picture.
int max_difference(const Picture& sheet, const nlohmann::json& tile, const Picture& expected) {
  EXPECT_EQ(tile["width"].get<int>(), expected.width) << tile["label"];
  EXPECT_EQ(tile["height"].get<int>(), expected.height) << tile["label"];
  if (expected.bytes.empty() || tile["width"].get<int>() != expected.width) return 256;
  int worst = 0;
  const int x0 = tile["x"], y0 = tile["y"];
  for (int y = 0; y < expected.height; ++y)
    for (int x = 0; x < expected.width; ++x)
      for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::abs(int(sheet.at(x0 + x, y0 + y)[c]) - int(expected.at(x, y)[c])));
  return worst;
}

// Pixels of a tile's label band that are dark: the black text on the grey sheet.
int dark_label_pixels(const Picture& sheet, const nlohmann::json& tile) {
  const nlohmann::json& box = tile["label_box"];
  int dark = 0;
  for (int y = box["y"].get<int>(); y < box["y"].get<int>() + box["height"].get<int>(); ++y)
    for (int x = box["x"].get<int>(); x < box["x"].get<int>() + box["width"].get<int>(); ++x)
      dark += sheet.at(x, y)[0] < 100;
  return dark;
}

// stylepipe(...) adds `--progress none`, which only `run` takes.
CommandResult stylepipe_preview(const std::string& args) {
  return run_command(shell_quote(stylepipe_binary()) + " preview " + args);
}

struct Preview {
  CommandResult result;
  nlohmann::json layout;
  Picture sheet;
};

Preview run_preview(const TempDir& dir, const std::string& args, const std::string& backend = "cpu") {
  Preview p;
  const std::string sheet = dir.file("sheet.png"), layout = dir.file("sheet.json");
  p.result = stylepipe_preview(args + " -o " + shell_quote(sheet) + " --layout-json " + shell_quote(layout) +
                       " --backend " + backend + " -y");
  if (p.result.exit_code != 0) return p;
  p.layout = nlohmann::json::parse(read_bytes(layout));
  p.sheet = decode_png(sheet, p.layout["width"], p.layout["height"]);
  return p;
}

// On `backend`, with `font_args` (--font FILE where fontconfig has none).
void expect_every_tile_equals_a_separate_run(const std::string& backend, const std::string& font_args) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  const int width = 64, height = 48;
  const std::vector<Picture> clip = make_random_clip(dir, "clip.mkv", width, height, 12, rng);
  const std::string input = dir.file("clip.mkv");
  // Non-temporal chains: the tile is exactly the run's frame.
  const std::string base = dir.file("base.yaml"), doubled = dir.file("doubled.yaml");
  write_text(base, "pipeline:\n  - pencil: {line_length: 5}\n");
  write_text(doubled, "pipeline:\n  - xbr: {scale: 2}\n");
  const Preview preview =
      run_preview(dir, shell_quote(base) + " -i " + shell_quote(input) + " --at 0.55 --vary pencil.line_length=3,9 " +
                           "--vary pencil.gamma_s=0.5,2 --config " + shell_quote(doubled) + font_args, backend);
  // 69: this machine cannot draw labels (the GPU machines' static FFmpeg has no drawtext, their image no fonts).
  if (preview.result.exit_code == 69) GTEST_SKIP() << "no labels can be drawn here: " << preview.result.output;
  ASSERT_EQ(preview.result.exit_code, 0) << preview.result.output;
  const int frame = 6;  // the first at or after 0.55 s at 10 fps
  EXPECT_NEAR(preview.layout["frame_seconds"].get<double>(), 0.6, 1e-6);

  struct Expected {
    std::string label, yaml;
    int width, height;
  };
  const std::vector<Expected> expected = {
      {"original", "", width, height},
      {"base.yaml", "pipeline:\n  - pencil: {line_length: 5}\n", width, height},
      {"doubled.yaml", "pipeline:\n  - xbr: {scale: 2}\n", 2 * width, 2 * height},
      {"pencil.line_length=3", "pipeline:\n  - pencil: {line_length: 3}\n", width, height},
      {"pencil.line_length=9", "pipeline:\n  - pencil: {line_length: 9}\n", width, height},
      {"pencil.gamma_s=0.5", "pipeline:\n  - pencil: {line_length: 5, gamma_s: 0.5}\n", width, height},
      {"pencil.gamma_s=2", "pipeline:\n  - pencil: {line_length: 5, gamma_s: 2}\n", width, height},
  };
  const nlohmann::json& tiles = preview.layout["tiles"];
  ASSERT_EQ(tiles.size(), expected.size()) << preview.layout.dump(2);
  const std::vector<std::pair<int, int>> grid = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {2, 0}, {2, 1}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const nlohmann::json& tile = tiles[i];
    SCOPED_TRACE(expected[i].label);
    EXPECT_EQ(tile["label"], expected[i].label);
    EXPECT_EQ(tile["row"], grid[i].first);
    EXPECT_EQ(tile["column"], grid[i].second);
    Picture oracle = clip[frame];
    if (!expected[i].yaml.empty()) {
      const std::string config = dir.file("variant" + std::to_string(i) + ".yaml");
      write_text(config, expected[i].yaml);
      oracle = run_frame(config, input, frame, expected[i].width, expected[i].height, "", backend);
    }
    EXPECT_EQ(max_difference(preview.sheet, tile, oracle), 0);
    EXPECT_GT(dark_label_pixels(preview.sheet, tile), 10) << "no text under the tile";
  }
  // The variants differ, so equal tiles would not have proved much.
  EXPECT_NE(run_frame(dir.file("variant3.yaml"), input, frame, width, height, "", backend).bytes,
            run_frame(dir.file("variant4.yaml"), input, frame, width, height, "", backend).bytes);
}

TEST(PreviewE2E, EveryTileEqualsTheFrameOfASeparateRunOfItsVariant) { expect_every_tile_equals_a_separate_run("cpu", ""); }

// The GPU machines have no fontconfig: SP_TEST_FONT names a font file there.
TEST(PreviewE2E, CudaTilesEqualCudaRuns) {
  SP_REQUIRE_CUDA();
  const char* font = std::getenv("SP_TEST_FONT");
  expect_every_tile_equals_a_separate_run("cuda", font && *font ? std::string(" --font ") + shell_quote(font) : "");
}

// pencil with temporal_smoothing 0.5 keeps an EMA of the tone histogram: it
// asks for 9 frames of warm-up (0.5^9 < 1/512). Exactly: the tile is what a
// run that starts 9 frames earlier makes of that frame (the same frames went
// through the chain). Against a run from the start of the clip, it may differ
// by what the older frames still weigh in the EMA; a cold start at the same
// time (run --start) must be further off, or the warm-up proved nothing.
TEST(PreviewE2E, TemporalStageIsWarmedUpLikeTheVideo) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  const int width = 64, height = 48;
  make_random_clip(dir, "clip.mkv", width, height, 30, rng);
  const std::string input = dir.file("clip.mkv"), config = dir.file("smooth.yaml");
  write_text(config, "pipeline:\n  - pencil: {line_length: 5, temporal_smoothing: 0.5}\n");
  const Preview preview = run_preview(dir, shell_quote(config) + " -i " + shell_quote(input) + " --at 2.05");
  if (preview.result.exit_code == 69) GTEST_SKIP() << "no labels can be drawn here: " << preview.result.output;
  ASSERT_EQ(preview.result.exit_code, 0) << preview.result.output;
  EXPECT_EQ(preview.layout["warmup_frames"], 9);
  const nlohmann::json& tile = preview.layout["tiles"][1];
  ASSERT_EQ(tile["label"], "smooth.yaml");
  const int frame = 21;  // 2.1 s
  EXPECT_EQ(max_difference(preview.sheet, tile, run_frame(config, input, 9, width, height, "--start 1.15")), 0)
      << "not the frame after the 9 frames before it";
  const int warmed = max_difference(preview.sheet, tile, run_frame(config, input, frame, width, height));
  const int cold = max_difference(preview.sheet, tile, run_frame(config, input, 0, width, height, "--start 2.05"));
  std::printf("largest difference from the run's frame %d: %d levels warmed up, %d from a cold start\n", frame, warmed,
              cold);
  // Levels of 255: the 1/512 of the histogram that frames older than the
  // warm-up still hold, through histogram matching and the texture's power
  // (25 runs on fresh clips: at most 2).
  constexpr int kTolerance = 3;
  EXPECT_LE(warmed, kTolerance);
  EXPECT_GT(cold, kTolerance) << "a cold start looks the same here: the clip does not exercise the warm-up";
}

// A bad --vary fails before any work, with exit 78 and one line that names the flag.
TEST(PreviewE2E, BadVariationIsAConfigErrorNamingTheFlag) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  make_random_clip(dir, "clip.mkv", 32, 24, 2, rng);
  const std::string config = dir.file("base.yaml"), sheet = dir.file("sheet.png");
  write_text(config, "pipeline:\n  - pencil: {line_length: 5}\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pencl.line_length=5", "stage 'pencl' is unknown (did you mean 'pencil'?)"},
      {"pencil.line_lenght=5", "stage 'pencil' has no parameter 'line_lenght' (did you mean 'line_length'?)"},
      {"pencil.line_length=5,500", "parameter 'line_length' of stage 'pencil' must be between 0 and 129 (got 500)"},
      {"pencil.gradient=l3", "'l3'"},
      {"pencil.gamma_s=thick", "must be a number"},
      {"lowpoly.points=100", "base.yaml has no stage 'lowpoly' (its stages: pencil)"},
      {"pencil.line_length", "write STAGE.PARAMETER=VALUE"},
  };
  for (const auto& [vary, message] : cases) {
    SCOPED_TRACE(vary);
    const CommandResult r = stylepipe_preview(shell_quote(config) + " -i " + shell_quote(dir.file("clip.mkv")) +
                                      " --vary " + shell_quote(vary) + " -o " + shell_quote(sheet) + " --backend cpu");
    EXPECT_EQ(r.exit_code, 78) << r.output;
    const std::vector<std::string> lines = nonempty_lines(r.output);
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_EQ(lines[0].rfind("--vary " + vary + ": error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(message), std::string::npos) << lines[0];
    EXPECT_FALSE(std::filesystem::exists(sheet));
  }
}

// Without any font fontconfig knows of, the command says what to install and
// exits 69 before decoding; --font then names a file and works without fontconfig.
TEST(PreviewE2E, NoFontIsUnavailableUnlessOneIsNamed) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  make_random_clip(dir, "clip.mkv", 32, 24, 2, rng);
  const std::string font = run_command("fc-match -f '%{file}' sans-serif:scalable=true").output;
  // The GPU machines' image has no fontconfig and no fonts; the README's set-up installs both.
  if (!std::filesystem::is_regular_file(font)) GTEST_SKIP() << "this test needs fontconfig and a font installed: " << font;
  write_text(dir.file("no-fonts.conf"), "<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n");
  write_text(dir.file("base.yaml"), "pipeline:\n  - xbr: {scale: 2}\n");
  const std::string command = "FONTCONFIG_FILE=" + shell_quote(dir.file("no-fonts.conf")) + " " +
                              shell_quote(stylepipe_binary()) + " preview " + shell_quote(dir.file("base.yaml")) +
                              " -i " + shell_quote(dir.file("clip.mkv")) + " -o " + shell_quote(dir.file("sheet.png")) +
                              " --backend cpu";
  const CommandResult without = run_command(command);
  EXPECT_EQ(without.exit_code, 69) << without.output;
  ASSERT_EQ(nonempty_lines(without.output).size(), 1u) << without.output;
  EXPECT_NE(without.output.find("fonts-dejavu-core"), std::string::npos) << without.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("sheet.png")));
  const CommandResult named = run_command(command + " --font " + shell_quote(font));
  EXPECT_EQ(named.exit_code, 0) << named.output;
  EXPECT_TRUE(std::filesystem::exists(dir.file("sheet.png")));
}

}  // namespace
}  // namespace sp::test
