// The concat of a --jobs run reads each segment while its worker writes it:
// whatever the pieces and pauses the writers make, the joined file holds the
// packets a join of the finished files gives, and a writer that is gone
// leaves nothing behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "orchestration/concat.h"
#include "orchestration/concat_test_util.h"

namespace sp::test {
using namespace concat_fixtures;
namespace {

namespace fs = std::filesystem;

// Every packet of every stream, with its bytes' hash, by ffprobe: a joined
// file's muxer may differ from another's only outside them (Matroska's random
// segment id).
std::string packets_of(const std::string& file) {
  const CommandResult r = run_command("ffprobe -v error -show_data_hash MD5 -show_entries "
                                      "packet=stream_index,pts,dts,duration,flags,data_hash -of csv=p=0 " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

class ConcatAsWritten : public testing::Test {
 protected:
  void SetUp() override {
    const ClipWithCuts clip = short_clip_with_cuts(dir_, rng_);
    ASSERT_FALSE(HasFailure());
    ManifestOutput output;
    const bool x264 = rng_() % 2;
    output.path = dir_.file(x264 ? "joined.mp4" : "joined.mkv");
    output.codec = x264 ? "libx264" : "ffv1";
    output.preset = "veryfast";
    manifest_ = make_manifest(clip.input, clip.cuts, output, dir_.path().string(), "plan-" + std::to_string(rng_()));
    ASSERT_NO_FATAL_FAILURE(run_all_segments(manifest_, {}));
    concat_segments(manifest_, {});
    joined_from_files_ = packets_of(manifest_.output.path);
    fs::remove(manifest_.output.path);
    for (int k = 0; k < segments(); ++k) {
      bytes_.push_back(file_bytes(manifest_.segment_path(k)));
      fs::remove(manifest_.segment_path(k));
    }
  }

  int segments() const { return int(manifest_.segments.size()); }

  // Segment k as a worker writes it: begun after a random pause (over a file
  // an earlier run left, at times), its bytes in random pieces and pauses,
  // then renamed and announced. It stops after `stop_after` bytes, if given,
  // as a worker that fails does.
  void write_segment(int k, SegmentArrivals& arrivals, uint64_t seed, size_t stop_after = SIZE_MAX) {
    std::mt19937_64 rng(seed);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 40));
    const std::string writing = manifest_.writing_segment_path(k);
    if (rng() % 3 == 0) std::ofstream(writing, std::ios::binary) << "an earlier run's bytes";
    announce_segment_writing(manifest_, k, arrivals);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 10));  // the encoder's first frame
    const std::string& bytes = bytes_[size_t(k)];
    std::ofstream out(writing, std::ios::binary);
    write_in_pieces(out, std::string_view(bytes).substr(0, stop_after), rng, 6000, std::chrono::microseconds(1500));
    out.close();
    if (stop_after < bytes.size()) return;
    fs::rename(writing, manifest_.partial_segment_path(k));
    fs::rename(manifest_.partial_segment_path(k), manifest_.segment_path(k));
    arrivals.finished(k);
  }

  std::mt19937_64 rng_{fresh_seed() ^ 0xa5f1};
  TempDir dir_;
  Manifest manifest_;
  std::string joined_from_files_;
  std::vector<std::string> bytes_;  // of each finished segment
};

TEST_F(ConcatAsWritten, JoinsTheSamePacketsAsTheFinishedFilesWhateverPiecesTheWritersMake) {
  SegmentArrivals arrivals(manifest_.segments.size());
  std::vector<std::thread> writers;
  for (int k = 0; k < segments(); ++k) {
    if (rng_() % 4 == 0) {  // finished before the join began, as a resumed run's
      std::ofstream(manifest_.segment_path(k), std::ios::binary) << bytes_[size_t(k)];
      arrivals.finished(k);
    } else {
      writers.emplace_back([this, k, &arrivals, seed = rng_()] { write_segment(k, arrivals, seed); });
    }
  }
  const std::optional<ConcatResult> result = concat_segments_as_they_finish(manifest_, arrivals);
  for (std::thread& t : writers) t.join();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->segments, segments());
  EXPECT_EQ(packets_of(manifest_.output.path), joined_from_files_);
}

TEST_F(ConcatAsWritten, AWriterThatIsGoneLeavesNoOutput) {
  SegmentArrivals arrivals(manifest_.segments.size());
  const int failing = int(rng_() % uint64_t(segments()));
  const size_t stop_after = rng_() % bytes_[size_t(failing)].size();
  std::vector<std::thread> writers;
  for (int k = 0; k < segments(); ++k)
    writers.emplace_back([&, k, seed = rng_()] {
      write_segment(k, arrivals, seed, k == failing ? stop_after : SIZE_MAX);
      if (k == failing) arrivals.abandon();
    });
  const std::optional<ConcatResult> result = concat_segments_as_they_finish(manifest_, arrivals);
  for (std::thread& t : writers) t.join();
  SCOPED_TRACE(testing::Message() << "segment " << failing << " stopped after " << stop_after << " bytes");
  EXPECT_FALSE(result.has_value());
  EXPECT_FALSE(fs::exists(manifest_.output.path));
  EXPECT_FALSE(fs::exists(dir_.file("." + fs::path(manifest_.output.path).filename().string() + ".partial")));
}

}  // namespace
}  // namespace sp::test
