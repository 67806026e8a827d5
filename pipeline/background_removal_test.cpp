// A removal in the background frees its path at once, leaves nothing behind
// once waited for, and never touches what is made again under that path.
#include "pipeline/background_removal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

namespace fs = std::filesystem;

TEST(BackgroundRemoval, FreesThePathAtOnceAndSparesWhatIsMadeThereAgain) {
  std::mt19937_64 rng(fresh_seed() ^ 0xb9);
  TempDir dir;
  const std::string folder = dir.file("work"), file = dir.file("out.mp4");
  fs::create_directories(folder + "/sub");
  for (int i = 0, n = 1 + int(rng() % 20); i < n; ++i)
    std::ofstream(folder + (i % 2 ? "/sub/" : "/") + std::to_string(i)) << std::string(rng() % 100000, 'x');
  std::ofstream(file) << std::string(rng() % 100000, 'y');
  remove_in_background(folder);
  remove_in_background(file);
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_FALSE(fs::exists(file));
  fs::create_directories(folder);
  const std::string again = std::to_string(rng());
  std::ofstream(folder + "/made_again") << again;
  wait_for_background_removals();
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"work"});
  std::ifstream in(folder + "/made_again");
  std::string got;
  in >> got;
  EXPECT_EQ(got, again);
}

}  // namespace
}  // namespace sp::test
