#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the full header is heavy: the tests that read JSON include it

namespace sp::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command, capturing its output.
CommandResult run_command(const std::string& command);
std::string shell_quote(const std::string& s);
// ffmpeg, quiet, overwriting.
CommandResult ffmpeg(const std::string& args);
// A JSON file (a manifest, --stats-json); a discarded value where it does not parse.
nlohmann::json read_json(const std::string& path);
// `stylepipe run CONFIG` on the CPU backend.
std::string run_parallel_cmd(const std::string& config, const std::string& in, const std::string& out,
                             const std::string& flags);

// Writes `bytes` as a streaming writer does, for a reader that follows the
// file: pieces of 1 to `max_piece` bytes, each flushed, with a pause of up to
// `max_pause` after each.
void write_in_pieces(std::ostream& out, std::string_view bytes, std::mt19937_64& rng, size_t max_piece,
                     std::chrono::microseconds max_pause);

// A fresh temporary directory removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  std::filesystem::path path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string stylepipe_binary();
std::string source_dir();
std::string identity_config();  // configs/identity.yaml: the conversion-only chain

// The stylepipe binary with `args` and no progress output.
CommandResult stylepipe(const std::string& args);
// Runs stylepipe with `args` (which must ask for `--progress json`), sends it
// SIGINT once its progress shows frames flowing plus `settle_seconds` (a
// fixed delay alone races the start-up on a busy machine), and waits for it.
CommandResult stylepipe_interrupted_once_frames_flow(const std::string& args, const std::string& progress_log,
                                                      double settle_seconds = 0);

// ffprobe helpers: per-frame presentation times of the first video stream,
// and md5 of every packet of the audio streams (framemd5, stream copy).
std::vector<double> video_frame_times(const std::string& file);
std::vector<std::string> audio_packet_hashes(const std::string& file);
int decoded_video_frames(const std::string& file);
// framemd5 of every decoded picture of the first video stream.
std::string video_md5s(const std::string& file);

// The first video stream's reorder delay (has_b_frames) and its packets'
// times in decode order, in its time base; a decode time the demuxer does not
// give (Matroska's first ones) is none.
struct VideoPacketTimes {
  int has_b_frames = -1;
  std::vector<int64_t> pts;
  std::vector<std::optional<int64_t>> dts;
};
VideoPacketTimes video_packet_times(const std::string& file);

}  // namespace sp::test
