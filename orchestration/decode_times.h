#pragma once
// Decode times for video packets known by their presentation times only (the
// segments' NUT stores no others), as x264, x265 and FFmpeg's own encoders
// set them for a stream that reorders frames `reorder_delay` deep: packet i
// is decoded at the presentation time of frame i - d, the first d packets as
// far before frames 0..d-1 as frame d is after frame 0. Given the packets of
// all segments one after the other, they are a single run's decode times: a
// seam needs no fix-up, and an MP4 gets the single run's edit list.
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

namespace sp {

class DecodeTimes {
 public:
  explicit DecodeTimes(int reorder_delay);

  // The next packet, in decode order.
  void add(int64_t pts);
  // No more packets: every decode time is known.
  void finish();
  // Whether the decode time of the oldest packet not yet taken is known
  // (at once, except for the first d packets: after 2d more or the end).
  bool ready() const;
  // That decode time; only when ready().
  int64_t take();

 private:
  void present_earliest();

  int delay_;
  int64_t added_ = 0, taken_ = 0;
  bool finished_ = false;
  // Presentation times of frames not yet shown by a decoder d frames behind.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> not_shown_;
  std::vector<int64_t> first_shown_;  // frames 0..d, for the first d packets
  std::deque<int64_t> later_;         // decode times of packets d, d + 1, ... not yet taken
  std::vector<int64_t> leading_;      // of packets 0..d-1, once known
};

}  // namespace sp
