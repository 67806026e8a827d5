// read_whole_file against the bytes written, random ones (NULs and newlines
// included, up to a few stream buffers long), a missing file and a directory.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "pipeline/whole_file.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

TEST(WholeFile, GivesBackEveryByteWritten) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  for (const size_t size : {size_t(0), size_t(1), size_t(rng() % 4096), size_t(65536 + rng() % 200000)}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = char(rng());
    const std::string path = dir.file(std::to_string(size) + ".bin");
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    const std::optional<std::string> read = read_whole_file(path);
    ASSERT_TRUE(read) << size;
    EXPECT_EQ(*read, bytes) << size;
  }
}

TEST(WholeFile, NoneWhereTheFileIsNotThere) {
  TempDir dir;
  std::string why;
  EXPECT_FALSE(read_whole_file(dir.file("missing"), &why));
  EXPECT_EQ(why, std::strerror(ENOENT));
  EXPECT_FALSE(read_whole_file(dir.file("missing/deeper")));
}

// fopen opens a directory; reading it fails.
TEST(WholeFile, NoneForADirectoryWithTheReason) {
  TempDir dir;
  std::string why;
  EXPECT_FALSE(read_whole_file(dir.path(), &why));
  EXPECT_EQ(why, std::strerror(EISDIR));
}

}  // namespace
}  // namespace sp::test
