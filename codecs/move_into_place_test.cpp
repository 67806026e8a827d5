// A finished output takes its name without losing an existing file on the way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "codecs/muxer.h"
#include "pipeline/background_removal.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

namespace fs = std::filesystem;

std::string random_bytes(std::mt19937_64& rng) {
  std::string bytes(100 + rng() % 5000, '\0');
  for (char& c : bytes) c = char(rng());
  return bytes;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> names_in(const TempDir& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(MoveIntoPlace, ReplacesAnExistingFileAndLeavesNothingBeside) {
  std::mt19937_64 rng(fresh_seed() ^ 0x3e1);
  TempDir dir;
  const std::string output = dir.file("out.mp4"), temporary = temporary_output_path(output);
  const std::string finished = random_bytes(rng);
  std::ofstream(output, std::ios::binary) << random_bytes(rng);
  std::ofstream(temporary, std::ios::binary) << finished;
  std::error_code ec;
  move_into_place(temporary, output, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(read(output), finished);
  wait_for_background_removals();
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.mp4"});
}

TEST(MoveIntoPlace, TakesAFreeName) {
  std::mt19937_64 rng(fresh_seed() ^ 0x3e2);
  TempDir dir;
  const std::string output = dir.file("out.mkv"), temporary = temporary_output_path(output);
  const std::string finished = random_bytes(rng);
  std::ofstream(temporary, std::ios::binary) << finished;
  std::error_code ec;
  move_into_place(temporary, output, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(read(output), finished);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.mkv"});
}

TEST(MoveIntoPlace, AFailedMoveGivesTheExistingFileItsNameBack) {
  std::mt19937_64 rng(fresh_seed() ^ 0x3e3);
  TempDir dir;
  const std::string output = dir.file("out.mp4");
  const std::string existing = random_bytes(rng);
  std::ofstream(output, std::ios::binary) << existing;
  std::error_code ec;
  move_into_place(dir.file(".never_written.partial"), output, ec);
  EXPECT_TRUE(ec);
  EXPECT_EQ(read(output), existing);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.mp4"});
}

}  // namespace
}  // namespace sp::test
