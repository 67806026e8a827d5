// A file read while another thread writes it: every byte, in order, and its
// end only once the writer has finished.
#include "orchestration/growing_file.h"

extern "C" {
#include <libavutil/error.h>
}

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

using namespace std::chrono_literals;

// The writer's state as a test sets it.
struct TestWriter {
  std::atomic<FileWriter> state{FileWriter::writing};
  GrowingFile::WaitForWriter wait() {
    return [this](std::chrono::milliseconds t) {
      if (state == FileWriter::writing) std::this_thread::sleep_for(t);
      return state.load();
    };
  }
};

std::string random_bytes(std::mt19937_64& rng, size_t size) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = char(rng());
  return bytes;
}

// Reads the whole file through read_at in random pieces; the last result is
// what ended it.
std::string read_all(GrowingFile& file, std::mt19937_64& rng, int* last) {
  std::string got;
  for (;;) {
    std::string piece(1 + rng() % 5000, '\0');
    const int n = file.read_at(reinterpret_cast<uint8_t*>(piece.data()), int(piece.size()), int64_t(got.size()));
    if (n <= 0) {
      *last = n;
      return got;
    }
    got.append(piece, 0, size_t(n));
  }
}

TEST(GrowingFile, ReadsEveryByteAsItIsWrittenAndEndsOnlyOnceTheWriterFinished) {
  std::mt19937_64 rng(fresh_seed() ^ 0x960);
  TempDir dir;
  const std::string path = dir.file("growing.bin");
  const std::string bytes = random_bytes(rng, 20000 + rng() % 200000);
  std::ofstream out(path, std::ios::binary);
  TestWriter writer;
  GrowingFile file(path, writer.wait());
  std::thread write([&, seed = rng()] {
    std::mt19937_64 r(seed);
    write_in_pieces(out, bytes, r, 9000, 3000us);
    out.close();
    writer.state = FileWriter::finished;
  });
  int last = 0;
  const std::string got = read_all(file, rng, &last);
  write.join();
  EXPECT_EQ(last, AVERROR_EOF);
  ASSERT_EQ(got.size(), bytes.size());
  EXPECT_TRUE(got == bytes) << "the bytes read differ from those written";
}

// A reader at the end of what a writer wrote, which `end` stops from another
// thread 20 ms later: the read ends with AVERROR_EXIT, every byte read.
void expect_read_ended_by(uint64_t seed, const std::function<void(TestWriter&, GrowingFile&)>& end) {
  std::mt19937_64 rng(seed);
  TempDir dir;
  const std::string path = dir.file("growing.bin");
  const std::string bytes = random_bytes(rng, 1000 + rng() % 10000);
  std::ofstream(path, std::ios::binary) << bytes;
  TestWriter writer;  // writing, and not done
  GrowingFile file(path, writer.wait());
  std::thread stop([&] {
    std::this_thread::sleep_for(20ms);
    end(writer, file);
  });
  int last = 0;
  const std::string got = read_all(file, rng, &last);
  stop.join();
  EXPECT_EQ(last, AVERROR_EXIT);
  EXPECT_TRUE(got == bytes);
}

TEST(GrowingFile, AWriterThatIsGoneEndsTheReadWithAnExit) {
  expect_read_ended_by(fresh_seed() ^ 0x961, [](TestWriter& writer, GrowingFile&) { writer.state = FileWriter::gone; });
}

TEST(GrowingFile, ACancelledReadEndsWhileTheWriterStillWrites) {
  expect_read_ended_by(fresh_seed() ^ 0x962, [](TestWriter&, GrowingFile& file) { file.cancel(); });
}

TEST(GrowingFile, OpenIfThereIsNullForAMissingFileAndThrowsForAnUnreadableOne) {
  TempDir dir;
  TestWriter writer;
  EXPECT_EQ(GrowingFile::open_if_there(dir.file("not_there.nut"), writer.wait()), nullptr);
  std::ofstream(dir.file("not_a_folder.bin")) << "x";
  try {
    GrowingFile::open_if_there(dir.file("not_a_folder.bin") + "/x", writer.wait());
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("not_a_folder.bin/x"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sp::test
