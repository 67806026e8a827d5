#include "orchestration/workers.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <sstream>

#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

extern char** environ;


namespace sp {
namespace {

using Clock = std::chrono::steady_clock;

struct Worker {
  int index = -1;
  pid_t pid = -1;
  int output_fd = -1;    // the worker's stderr: progress records and log lines
  std::string pending;   // a line not yet complete
  int64_t frames = 0;
  double first_media_seconds = -1, media_seconds = 0;  // of its frames, in the input's clock
  int device = -1;
};

Worker spawn_worker(const Manifest& m, int index, int device, const ParallelRunOptions& o) {
  std::vector<std::string> args = {"stylepipe", "run", "--manifest", m.path, "--index", std::to_string(index),
                                   "--progress", "json", "--stats-json",
                                   m.segment_stats_path(index)};
  const WorkerOverrides& overrides = o.worker;
  if (overrides.frames_in_flight) args.insert(args.end(), {"--frames-in-flight", std::to_string(*overrides.frames_in_flight)});
  if (overrides.queue_depth) args.insert(args.end(), {"--queue-depth", std::to_string(*overrides.queue_depth)});
  if (overrides.threads) args.insert(args.end(), {"--threads", std::to_string(*overrides.threads)});
  args.insert(args.end(), {"--log-level", o.log_level});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (device < 0 || std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env.emplace_back(*e);
  if (device >= 0) env.push_back("CUDA_VISIBLE_DEVICES=" + visible_device_entry(device));
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0)
    throw Error(ExitCode::io_error, "cannot create a pipe for a worker");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  // Its own process group: a terminal's Ctrl-C reaches only us, and we pass
  // on exactly one SIGINT (a second one would end a worker before it
  // finalizes its segment).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int r = posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (r != 0) {
    close(fds[0]);
    throw Error(ExitCode::internal, std::string("cannot start a worker: ") + std::strerror(r));
  }
  Worker w;
  w.index = index;
  w.pid = pid;
  w.output_fd = fds[0];
  w.device = device;
  return w;
}

// A worker's stderr: NDJSON progress records are summed into ours, log lines
// are passed on with the segment named once. A notice every worker gives
// alike (the backend it fell back to, the encoder) is passed on once; errors
// always are.
void take_lines(Worker& w, bool at_end, std::set<std::string>& notices) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(w.output_fd, buffer, sizeof buffer);
    if (n <= 0) break;
    w.pending.append(buffer, size_t(n));
    if (!at_end) break;
  }
  size_t start = 0;
  for (size_t end; (end = w.pending.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = w.pending.substr(start, end - start);
    if (!line.empty() && line.front() == '{') {
      const auto record = nlohmann::json::parse(line, nullptr, false);
      if (!record.is_discarded() && record.contains("frame")) {
        w.frames = record.value("frame", int64_t(0));
        w.media_seconds = record.value("media_seconds", 0.0);
        if (w.first_media_seconds < 0 && w.frames > 0) w.first_media_seconds = w.media_seconds;
        continue;
      }
    }
    std::string text = line;
    if (text.rfind("stylepipe: ", 0) == 0) text.erase(0, 11);
    const std::string own = fmt::format("segment {}: ", w.index);
    if (text.rfind(own, 0) == 0) text.erase(0, own.size());
    if (text.rfind("error: ", 0) != 0 && !notices.insert(text).second) continue;
    std::fprintf(stderr, "stylepipe: segment %d: %s\n", w.index, text.c_str());
  }
  w.pending.erase(0, start);
}

}  // namespace

WorkersOutcome run_worker_processes(const Manifest& m, const ParallelRunOptions& o, ProgressReporter& progress,
                                    SegmentArrivals& arrivals, const std::atomic<bool>& stop) {
  std::map<int, Worker> running;  // by pid
  std::set<std::string> notices;  // log lines already passed on
  WorkersOutcome outcome;
  std::map<int, int>& exit_codes = outcome.exit_codes;
  std::map<int, int>& devices_used = outcome.devices_used;
  std::vector<int64_t> frames_done(m.segments.size(), 0);
  std::vector<double> media_done(m.segments.size(), 0);
  int next = 0, slot = 0, failure = 0;
  std::deque<int> freed_devices;
  bool stopping = false;

  auto segment_media = [](const Worker& w) { return w.first_media_seconds < 0 ? 0.0 : w.media_seconds - w.first_media_seconds; };
  while (next < int(m.segments.size()) || !running.empty()) {
    if (!stopping && (interrupted() || failure || stop)) {
      stopping = true;
      for (auto& [pid, w] : running) kill(pid, SIGINT);
    }
    while (!stopping && next < int(m.segments.size()) && int(running.size()) < o.jobs) {
      // A worker that ended leaves its GPU to the next one, so every GPU keeps its share of workers.
      int device = -1;
      if (!freed_devices.empty()) {
        device = freed_devices.front();
        freed_devices.pop_front();
      } else if (!o.devices.empty()) {
        device = o.devices[size_t(slot++) % o.devices.size()];
      }
      announce_segment_writing(m, next, arrivals);
      Worker w = spawn_worker(m, next++, device, o);
      running.emplace(w.pid, std::move(w));
    }
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (auto& [pid, w] : running) fds.push_back({w.output_fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 200);
    for (auto& [pid, w] : running) take_lines(w, false, notices);

    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
      auto it = running.find(pid);
      if (it == running.end()) continue;
      Worker& w = it->second;
      take_lines(w, true, notices);
      close(w.output_fd);
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      exit_codes[w.index] = code;
      devices_used[w.index] = w.device;
      frames_done[size_t(w.index)] = w.frames;
      media_done[size_t(w.index)] = segment_media(w);
      if (code == 0) {
        arrivals.finished(w.index);
      } else if (code != int(ExitCode::interrupted) && !failure) {
        log_error("segment {} failed (exit {}); stopping the other workers", w.index, code);
        failure = code;
      }
      freed_devices.push_back(w.device);
      running.erase(it);
    }
    int64_t frames = 0;
    double media = 0;
    for (size_t i = 0; i < frames_done.size(); ++i) frames += frames_done[i], media += media_done[i];
    for (auto& [pid, w] : running) frames += w.frames, media += segment_media(w);
    progress.update(frames, media);
  }
  int64_t total_frames = 0;
  double total_media = 0;
  for (size_t i = 0; i < frames_done.size(); ++i) total_frames += frames_done[i], total_media += media_done[i];
  if (failure || interrupted()) arrivals.abandon();
  progress.finish(total_frames, total_media);
  outcome.failure = failure;
  outcome.frames = total_frames;
  outcome.media_seconds = total_media;
  return outcome;
}

}  // namespace sp
