#pragma once
// Joins the segments of a plan into its output: video packets copied from the
// segment files, never re-encoded; audio, subtitles and metadata copied once
// from the input, so they are never cut at a seam.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "orchestration/growing_file.h"
#include "orchestration/manifest.h"

namespace sp {

struct ConcatOptions {
  bool overwrite = false;  // besides the manifest's own -y
  // Ctrl-C in a --jobs run: join the finished segments from the start, and
  // the interrupted one after them (finalized, under its partial name), and
  // cut the copied streams where the video ends. Without it every segment
  // must be finished.
  bool finished_prefix_only = false;
};

struct ConcatResult {
  int segments = 0;
  int64_t frames = 0;
  int64_t packets_copied = 0;  // audio, subtitles
  std::string output;
};

// Checks every segment first: a missing, unfinished (only a partial file) or
// foreign one (another plan, another index, times outside its range, another
// codec or size than segment 0) throws sp::Error naming it, and nothing is
// written. The output is written under a temporary name beside it and
// renamed when complete.
ConcatResult concat_segments(const Manifest& manifest, const ConcatOptions& options);

// Segments of a run in progress, announced as their workers begin and
// finish them, in any order.
class SegmentArrivals {
 public:
  explicit SegmentArrivals(size_t segments);
  // Its worker begins it: the file under Manifest::writing_segment_path, once
  // there, is that worker's (see announce_segment_writing).
  void writing(int index);
  void finished(int index);  // its final file is in place
  void abandon();            // the rest will not come (a failure, Ctrl-C)
  // Blocks until its worker has begun it (writing), it is finished, or the
  // run is abandoned (gone).
  FileWriter wait_for_writer(int index);
  // Waits at most `timeout` for it to finish, and says where it is then.
  FileWriter wait_for_finish(int index, std::chrono::milliseconds timeout);
  bool abandoned();

 private:
  enum class Progress : unsigned char { not_begun, writing, finished };
  FileWriter writer(int index) const;  // with the mutex held

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Progress> progress_;
  bool abandoned_ = false;
};

// Before a worker begins segment `index`: removes what an earlier run may
// have left under its writer's temporary name, then announces it.
void announce_segment_writing(const Manifest& manifest, int index, SegmentArrivals& arrivals);

// The concat of a `--jobs` run, joining each segment as its worker writes it
// once those before it are joined (a segment whose worker has not been
// announced as writing it, once it is finished), so that the run ends a
// moment after its last worker. Each segment is checked as it comes; a failed check throws
// (the temporary output is removed, the output untouched). Returns nullopt,
// having removed the temporary output, when the arrivals are abandoned.
std::optional<ConcatResult> concat_segments_as_they_finish(const Manifest& manifest, SegmentArrivals& arrivals);

}  // namespace sp
