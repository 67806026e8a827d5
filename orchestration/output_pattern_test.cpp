// The batch's output pattern and input globs: worked examples, then random
// names against what the pattern's words mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "orchestration/output_pattern.h"
#include "pipeline/errors.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

ExitCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::ok;
}

TEST(OutputPattern, FillsEachPlaceholder) {
  EXPECT_EQ(fill_output_pattern("out/{stem}_pencil.mp4", "clips/a.b.mkv", 3), "out/a.b_pencil.mp4");
  EXPECT_EQ(fill_output_pattern("{index}-{name}.{ext}.mkv", "/x/y/clip.MOV", 12), "12-clip.MOV.MOV.mkv");
  EXPECT_EQ(fill_output_pattern("{stem}{ext}", "noext", 0), "noext");
  EXPECT_EQ(fill_output_pattern("{{{stem}}}.mp4", "a.mp4", 0), "{a}.mp4") << "doubled braces are literal";
  EXPECT_TRUE(is_output_pattern("o/{stem}.mp4"));
  EXPECT_FALSE(is_output_pattern("o/out_%04d.png"));
}

TEST(OutputPattern, RefusesUnknownPlaceholdersAndUnpairedBraces) {
  for (const char* bad : {"{Stem}.mp4", "{stem.mp4", "stem}.mp4", "{}.mp4", "{index:03}.mp4"}) {
    EXPECT_EQ(code_of([&] { check_output_pattern(bad); }), ExitCode::usage) << bad;
    EXPECT_EQ(code_of([&] { fill_output_pattern(bad, "a.mp4", 0); }), ExitCode::usage) << bad;
  }
  try {
    check_output_pattern("out/{size}.mp4");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("{size}"), std::string::npos) << e.what();
  }
}

std::string random_word(std::mt19937_64& rng, size_t length) {
  static const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  std::string w;
  while (w.size() < length) w += letters[rng() % letters.size()];
  return w;
}

TEST(OutputPattern, RandomNamesFillAsTheirParts) {
  std::mt19937_64 rng(fresh_seed());
  for (int round = 0; round < 200; ++round) {
    const std::string folder = random_word(rng, 1 + rng() % 6), stem = random_word(rng, 1 + rng() % 10),
                      ext = random_word(rng, 1 + rng() % 4);
    const size_t index = rng() % 1000;
    const std::string input = folder + "/" + stem + "." + ext;
    EXPECT_EQ(fill_output_pattern("o/{stem}|{name}|{ext}|{index}", input, index),
              "o/" + stem + "|" + stem + "." + ext + "|" + ext + "|" + std::to_string(index))
        << input;
  }
}

TEST(InputGlobs, ExpandInByteOrderAndKeepPlainInputs) {
  std::mt19937_64 rng(fresh_seed());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sp-glob-" + std::to_string(rng() % 1000000000));
  std::filesystem::create_directories(dir);
  std::vector<std::string> clips;
  for (int i = 0; i < 7; ++i) {
    const std::string file = (dir / (random_word(rng, 1 + rng() % 8) + ".mp4")).string();
    std::ofstream(file) << "x";
    if (std::find(clips.begin(), clips.end(), file) == clips.end()) clips.push_back(file);
  }
  std::ofstream((dir / "other.mkv").string()) << "x";
  std::sort(clips.begin(), clips.end());
  const std::string plain = (dir / "missing.mov").string();
  std::vector<std::string> expected = clips;
  expected.push_back(plain);
  EXPECT_EQ(expand_input_globs({(dir / "*.mp4").string(), plain}), expected);
  EXPECT_FALSE(is_input_glob("https://host/clip.mp4?token=1"));
  EXPECT_EQ(code_of([&] { expand_input_globs({(dir / "*.avi").string()}); }), ExitCode::usage);
  // A file whose name has glob characters is that file.
  const std::string bracketed = (dir / "take[1].mp4").string();
  std::ofstream(bracketed) << "x";
  EXPECT_EQ(expand_input_globs({bracketed}), std::vector<std::string>{bracketed});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sp::test
