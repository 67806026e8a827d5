#include "orchestration/growing_file.h"

extern "C" {
#include <libavutil/error.h>
}

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pipeline/errors.h"

namespace sp {

namespace {
int open_or_throw(const std::string& path, bool missing_is_fine) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && !(missing_is_fine && errno == ENOENT))
    throw Error(ExitCode::io_error, path + ": cannot open it to read while it is written: " + std::strerror(errno));
  return fd;
}
}  // namespace

GrowingFile::GrowingFile(const std::string& path, WaitForWriter wait)
    : GrowingFile(path, std::move(wait), Opened{open_or_throw(path, false)}) {}

GrowingFile::GrowingFile(const std::string& path, WaitForWriter wait, Opened opened)
    : path_(path), wait_(std::move(wait)), fd_(opened.fd) {}

std::shared_ptr<GrowingFile> GrowingFile::open_if_there(const std::string& path, WaitForWriter wait) {
  const int fd = open_or_throw(path, true);
  if (fd < 0) return nullptr;
  return std::shared_ptr<GrowingFile>(new GrowingFile(path, std::move(wait), Opened{fd}));
}

GrowingFile::~GrowingFile() { ::close(fd_); }

int GrowingFile::read_at(uint8_t* buffer, int size, int64_t offset) {
  // Once the writer has said it finished, what the file holds is all of it:
  // one more read after that word, and its end is the end.
  bool finished = false;
  for (;;) {
    const ssize_t n = ::pread(fd_, buffer, size_t(size), off_t(offset));
    if (n > 0) return int(n);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return AVERROR(errno);
    if (finished) return AVERROR_EOF;
    if (cancelled_) return AVERROR_EXIT;
    switch (wait_(kPoll)) {
      case FileWriter::writing: break;
      case FileWriter::finished: finished = true; break;
      case FileWriter::gone: return AVERROR_EXIT;
    }
  }
}

}  // namespace sp
