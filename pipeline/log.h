#pragma once
#include <fmt/format.h>

#include <string>

namespace sp {

enum class LogLevel { quiet = 0, error = 1, warning = 2, info = 3, debug = 4 };

void set_log_level(LogLevel level);
LogLevel log_level();
bool parse_log_level(const std::string& text, LogLevel* out);

// One line to stderr, prefixed with "stylepipe: " and the level. Thread-safe;
// clears an updating progress line first.
void log_line(LogLevel level, const std::string& message);

template <class... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  log_line(LogLevel::error, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_warning(fmt::format_string<Args...> f, Args&&... args) {
  log_line(LogLevel::warning, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  log_line(LogLevel::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  log_line(LogLevel::debug, fmt::format(f, std::forward<Args>(args)...));
}

// What this thread's lines are about ("segment 3"), put before each of its
// messages: several transcodes share one stderr in a `--jobs` run.
void set_thread_log_context(std::string context);
const std::string& thread_log_context();

// Names the calling thread for top -H, perf and gdb ("sp-write"); the kernel
// keeps 15 characters. Threads started from it inherit the name.
void name_this_thread(const char* name);

// The progress line on a TTY is redrawn in place; log lines erase it first.
void set_status_line(const std::string& line);
void clear_status_line();

}  // namespace sp
