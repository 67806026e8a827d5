#pragma once
// The reading behind sample_keyframes (keyframe_sample.h): seeks, stretches
// read through from a keyframe before a place to one past it, and the checks
// that the file's clock runs forward.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "orchestration/keyframe_input.h"
#include "orchestration/keyframes.h"

namespace sp {

// Thrown where sampling cannot be trusted or would not pay: the caller reads
// every packet instead.
struct SamplingAbandoned {
  std::string why;
};

class KeyframeSampler {
 public:
  KeyframeSampler(VideoInput& in, AVRational time_base);

  // On a freshly opened input: from the start to the first keyframe, where
  // segment 0 decodes from.
  void read_first_keyframe();

  // Afterwards the keyframes read include the last one before `seconds` (or
  // the first of the file) and every one from there to the first past it, or
  // to the end of the file.
  void cover(double seconds);

  // Notes the decode time at evenly spread byte positions, for keyframes()
  // to check.
  void check_clock_by_bytes();

  // Every keyframe read, checked against the file's order: in it, decode
  // times rise, and keyframes come in the order of their times.
  std::vector<Keyframe> keyframes() const;

  // After `done` of `places` places: abandons where the rest, read at the
  // same pace, would pass the budget (GOPs about as long as the places are
  // apart), before reading that much.
  void check_pace(double done, double places) const;

  std::string summary() const;

 private:
  // A stretch of the file read through without a seek: every keyframe from
  // its first to its last was seen.
  struct Stretch {
    double first = -INFINITY;  // -infinity: read from the start of the file
    double last = -INFINITY;   // -infinity: no keyframe yet
    int64_t last_pts = 0;
    bool to_end = false;
  };
  struct FilePoint {
    int64_t pos = -1;
    int64_t dts = AV_NOPTS_VALUE;
  };

  double seconds_of(int64_t pts) const { return double(pts) * seconds_per_tick_; }
  double lead();
  // Reads to the next key packet with a time and adds it to `s`; false at
  // the end of the file.
  bool read_to_key(Stretch& s);
  void seek(double seconds);
  // Demuxers differ in where a seek to the start lands (MPEG-TS: on the last
  // packet decoded before the start time, after the first keyframe where
  // B-frames follow it); opened again, each starts at its first packet.
  void reopen();
  // Ctrl-C, not a seek that failed: there is no reading every packet instead.
  void throw_if_interrupted(int r) const;
  void check_budget();

  static constexpr size_t kNone = size_t(-1);
  VideoInput& in_;
  double seconds_per_tick_;
  PacketPtr packet_;
  int64_t byte_budget_, bytes_seen_, bytes_ = 0;
  int seeks_ = 0;
  int64_t first_pts_ = 0;
  std::vector<double> gaps_;  // between keyframes read one after the other
  std::vector<Stretch> stretches_;
  size_t current_ = 0;  // the stretch that ends where reading stopped; kNone after a seek
  std::map<int64_t, FilePoint> keys_;  // by pts
  std::vector<FilePoint> probes_;
};

}  // namespace sp
