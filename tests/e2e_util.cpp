#include "tests/e2e_util.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace sp::test {

CommandResult ffmpeg(const std::string& args) { return run_command("ffmpeg -hide_banner -v error -y " + args); }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

std::string run_parallel_cmd(const std::string& config, const std::string& in, const std::string& out,
                             const std::string& flags) {
  return "run " + config + " -i " + shell_quote(in) + " -o " + shell_quote(out) + " --backend cpu " + flags;
}

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() / ("stylepipe-test-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string stylepipe_binary() { return STYLEPIPE_BINARY; }
std::string source_dir() { return STYLEPIPE_SOURCE_DIR; }
std::string identity_config() { return source_dir() + "/configs/identity.yaml"; }

CommandResult stylepipe(const std::string& args) {
  return run_command(shell_quote(stylepipe_binary()) + " " + args + " --progress none");
}

CommandResult stylepipe_interrupted_once_frames_flow(const std::string& args, const std::string& progress_log,
                                                      double settle_seconds) {
  return run_command(shell_quote(stylepipe_binary()) + " " + args + " 2> " + shell_quote(progress_log) +
                     " & pid=$!; for i in $(seq 1 600); do grep -q '\"frame\":[1-9]' " + shell_quote(progress_log) +
                     " && break; sleep 0.05; done; sleep " + std::to_string(settle_seconds) + "; kill -INT $pid; wait $pid");
}

std::string video_md5s(const std::string& file) {
  return run_command("ffmpeg -v error -i " + shell_quote(file) + " -map 0:v -f framemd5 -").output;
}

std::vector<double> video_frame_times(const std::string& file) {
  const CommandResult r = run_command("ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 " +
                                      shell_quote(file));
  std::vector<double> times;
  for (const auto& l : nonempty_lines(r.output)) times.push_back(std::stod(l));
  return times;
}

VideoPacketTimes video_packet_times(const std::string& file) {
  VideoPacketTimes v;
  const CommandResult stream = run_command("ffprobe -v error -select_streams v:0 -show_entries stream=has_b_frames "
                                           "-of csv=p=0 " + shell_quote(file));
  if (stream.exit_code != 0) return v;
  v.has_b_frames = std::stoi(stream.output);
  const CommandResult packets = run_command("ffprobe -v error -select_streams v:0 -show_entries packet=pts,dts "
                                            "-of csv=p=0 " + shell_quote(file));
  for (const std::string& line : nonempty_lines(packets.output)) {
    const size_t comma = line.find(',');
    v.pts.push_back(std::stoll(line.substr(0, comma)));
    const std::string dts = line.substr(comma + 1);
    v.dts.push_back(dts == "N/A" ? std::nullopt : std::optional(std::stoll(dts)));
  }
  return v;
}

std::vector<std::string> audio_packet_hashes(const std::string& file) {
  const CommandResult r = run_command("ffmpeg -v error -i " + shell_quote(file) +
                                      " -map 0:a -c copy -f framemd5 -");
  std::vector<std::string> hashes;
  // "stream, dts, pts, duration, size, md5 of the data", then ", S=count,
  // size, md5" for a packet's side data (FFmpeg 7 gives a copied first AAC
  // packet its skip_samples there): the data's md5 is the sixth field.
  for (const auto& l : nonempty_lines(r.output)) {
    if (l[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream line(l);
    for (std::string field; std::getline(line, field, ',');)
      fields.push_back(field.substr(std::min(field.find_first_not_of(' '), field.size())));
    hashes.push_back(fields.size() >= 6 ? fields[5] : "unreadable framemd5 line: " + l);
  }
  return hashes;
}

int decoded_video_frames(const std::string& file) {
  const CommandResult r = run_command("ffprobe -v error -select_streams v:0 -count_frames -show_entries "
                                      "stream=nb_read_frames -of csv=p=0 " + shell_quote(file));
  try {
    return r.exit_code == 0 ? std::stoi(r.output) : -1;
  } catch (...) {
    return -1;
  }
}

void write_in_pieces(std::ostream& out, std::string_view bytes, std::mt19937_64& rng, size_t max_piece,
                     std::chrono::microseconds max_pause) {
  for (size_t at = 0; at < bytes.size();) {
    const size_t n = std::min(bytes.size() - at, size_t(1 + rng() % max_piece));
    out.write(bytes.data() + at, std::streamsize(n));
    out.flush();
    at += n;
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % uint64_t(max_pause.count())));
  }
}

}  // namespace sp::test
