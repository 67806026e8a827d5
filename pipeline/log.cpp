#include "pipeline/log.h"

#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <mutex>

namespace sp {
namespace {
std::mutex g_mutex;
LogLevel g_level = LogLevel::info;
bool g_status_shown = false;
const auto g_start = std::chrono::steady_clock::now();

void erase_status_locked() {
  if (g_status_shown) {
    std::fputs("\r\033[K", stderr);
    g_status_shown = false;
  }
}
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }

bool parse_log_level(const std::string& text, LogLevel* out) {
  static const std::pair<const char*, LogLevel> names[] = {{"quiet", LogLevel::quiet},
                                                           {"error", LogLevel::error},
                                                           {"warning", LogLevel::warning},
                                                           {"info", LogLevel::info},
                                                           {"debug", LogLevel::debug}};
  for (const auto& [name, level] : names)
    if (text == name) {
      *out = level;
      return true;
    }
  return false;
}

namespace {
thread_local std::string t_context;
}

void set_thread_log_context(std::string context) { t_context = std::move(context); }
const std::string& thread_log_context() { return t_context; }

void name_this_thread(const char* name) {
  char truncated[16] = {};
  std::snprintf(truncated, sizeof truncated, "%s", name);
  pthread_setname_np(pthread_self(), truncated);  // a name is a courtesy: failure changes nothing
}

void log_line(LogLevel level, const std::string& text) {
  if (level > g_level || level == LogLevel::quiet) return;
  const std::string message = t_context.empty() ? text : t_context + ": " + text;
  static const char* prefix[] = {"", "error: ", "warning: ", "", ""};
  std::lock_guard lock(g_mutex);
  erase_status_locked();
  if (level == LogLevel::debug) {
    // Debug lines carry the time since start-up: they are read to find where time goes.
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_start).count();
    std::fprintf(stderr, "stylepipe: [%8.1f ms] %s\n", ms, message.c_str());
  } else {
    std::fprintf(stderr, "stylepipe: %s%s\n", prefix[int(level)], message.c_str());
  }
  std::fflush(stderr);
}

void set_status_line(const std::string& line) {
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  g_status_shown = true;
}

void clear_status_line() {
  std::lock_guard lock(g_mutex);
  erase_status_locked();
}

}  // namespace sp
