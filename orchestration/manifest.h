#pragma once
// The plan of a segment-parallel run: what `stylepipe plan` writes, what each
// worker (`stylepipe run --manifest M --index I`) and `stylepipe concat M`
// read. Self-contained: the config is kept as text, so a worker never re-reads
// a config file that may have changed since.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

extern "C" {
#include <libavutil/rational.h>
}

namespace sp {

// Identifies the input's bytes cheaply: its size and a SHA-256 of its first
// and last MiB and 16 blocks of 64 KiB spread between (a 2-hour film in
// milliseconds). The modification time is kept for messages only: a copy to
// another machine changes it, not the content. A changed input is refused.
struct InputFingerprint {
  int64_t size_bytes = 0;
  int64_t mtime_ns = 0;
  std::string sampled_sha256;
  bool same_content(const InputFingerprint& o) const {
    return size_bytes == o.size_bytes && sampled_sha256 == o.sampled_sha256;
  }
};
InputFingerprint fingerprint_file(const std::string& path);  // throws sp::Error(no_input)

// A half-open range of presentation timestamps (video stream time base).
// The first segment begins at -infinity and the last ends at +infinity, so
// every input frame belongs to exactly one segment.
struct SegmentPlan {
  int index = 0;
  std::optional<int64_t> begin_pts;  // none: -infinity
  std::optional<int64_t> end_pts;    // none: +infinity
  // The keyframe decoding starts from: the segment's own, or an earlier one
  // that gives temporal stages their warm-up frames. None: the file's start.
  std::optional<int64_t> seek_pts;
  double begin_seconds = 0, end_seconds = -1;  // for people and progress; end < 0: the input's end
  std::string file;  // the segment's video file, relative to the work directory
};

struct ManifestOutput {
  std::string path;  // absolute
  std::string format, codec, preset, pixel_format;  // empty: chosen as a single run would
  int crf = 18;
  bool overwrite = false;
};

struct Manifest {
  static constexpr int kVersion = 1;
  std::string plan_id;   // written into every segment file; concat refuses files of another plan
  std::string path;      // where this manifest was read from or written to (not serialized)
  std::string workdir;   // absolute; segment files live here

  std::string input_path;  // absolute
  InputFingerprint input_fingerprint;
  int video_stream = -1;
  AVRational time_base{1, 1};  // of every pts in the segments
  double input_duration_seconds = -1;
  std::string keyframe_source;  // "index" (the demuxer's index), "packets" (a scan of packet headers) or
                                // "sampled" (packet headers read near the cuts only: see scan_keyframes_for)

  std::string config_path;  // as given, for messages
  std::string config_text;
  ManifestOutput output;
  std::string backend = "auto", hwdec = "auto", encoder = "auto";  // worker defaults; worker flags override
  int warmup_frames = 0;  // lead-in frames each segment's temporal stages get

  std::vector<SegmentPlan> segments;

  nlohmann::json to_json() const;
  static Manifest from_json(const nlohmann::json& j, const std::string& path);  // throws sp::Error(data_error)

  std::string segment_path(int index) const;          // workdir/file
  std::string partial_segment_path(int index) const;  // written there, renamed to segment_path when complete
  // Where its worker's writer has it while writing (a temporary name beside
  // the partial one, as for any output), for a concat that reads it as it grows.
  std::string writing_segment_path(int index) const;
  std::string segment_stats_path(int index) const;    // its worker's --stats-json, for the run's stats
};

// Writes atomically (temporary file, then rename). Throws sp::Error(io_error).
void write_manifest(const Manifest& m, const std::string& path);
// Throws sp::Error: no_input (66) for a missing file, data_error (65) for one
// that is not a manifest of this version.
Manifest read_manifest(const std::string& path);
// Throws sp::Error(data_error), naming the file, when the input is not the one planned.
void check_input_unchanged(const Manifest& m);

// Metadata tags of a segment file: which plan and which segment it is.
inline constexpr const char* kPlanIdTag = "stylepipe_plan_id";
inline constexpr const char* kSegmentIndexTag = "stylepipe_segment";
inline constexpr const char* kSegmentFormat = "nut";  // keeps any time base and codec exactly

}  // namespace sp
