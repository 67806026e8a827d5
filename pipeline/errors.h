#pragma once
#include <stdexcept>
#include <string>

namespace sp {

// sysexits-style exit codes, documented in the README.
enum class ExitCode : int {
  ok = 0,
  usage = 64,
  data_error = 65,
  no_input = 66,
  unavailable = 69,
  internal = 70,
  io_error = 74,
  config = 78,
  interrupted = 130,
};

// Every user-facing failure is one of these: a one-line message plus the exit code.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

}  // namespace sp
