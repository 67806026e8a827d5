#pragma once
// The errors of stylepipe's public API. Every failure that reaches a caller is
// one of these: a one-line message, and the exit code the CLI gives for it.
// Front ends map the classes to their own (Python: ConfigError(ValueError),
// MediaError(OSError), DeviceError(RuntimeError)).
#include <stdexcept>
#include <string>
#include <vector>

namespace stylepipe {

// sysexits-style codes, as documented in the README.
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

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// One problem in a config, at a 1-based line and column. `field` names what is
// wrong where the message says ("pencil.line_length", "pencil", "output.codec"),
// else it is empty.
struct ConfigProblem {
  int line = 1, column = 1;
  std::string field;
  std::string message;
};

// A config that does not validate. what() is every problem as a
// `file:line:col: error: message` line, in file order; the first problem is
// also in file(), line(), column() and field().
class ConfigError : public Error {
 public:
  ConfigError(std::string file, std::vector<ConfigProblem> problems, const std::string& rendered);
  const std::string& file() const { return file_; }
  const std::vector<ConfigProblem>& problems() const { return problems_; }
  int line() const { return problems_.empty() ? 0 : problems_.front().line; }
  int column() const { return problems_.empty() ? 0 : problems_.front().column; }
  std::string field() const { return problems_.empty() ? std::string() : problems_.front().field; }

 private:
  std::string file_;
  std::vector<ConfigProblem> problems_;
};

// A file that cannot be read, decoded, encoded or written (no_input,
// data_error, io_error).
class MediaError : public Error {
 public:
  using Error::Error;
};

// The device cannot do what was asked: no CUDA device, a build without
// CUDA, an array on another device than the chain's (unavailable).
class DeviceError : public Error {
 public:
  using Error::Error;
};

}  // namespace stylepipe
