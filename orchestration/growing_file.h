#pragma once
// A file read while another thread or process still writes it: the concat
// joins a segment as its worker makes it, so that the run ends a moment after
// its last worker instead of a copy of the last segments later.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace sp {

enum class FileWriter { writing, finished, gone };

class GrowingFile {
 public:
  // How long a reader at the file's end waits before it looks again: a
  // 1080p60 writer adds a frame every 17 ms.
  static constexpr std::chrono::milliseconds kPoll{4};

  // Waits at most the given time for the writer to finish; says where it is.
  using WaitForWriter = std::function<FileWriter(std::chrono::milliseconds)>;

  // Opens `path` (it must exist). Throws sp::Error(io_error) naming it.
  GrowingFile(const std::string& path, WaitForWriter wait);
  // Null where `path` is not there (yet); other failures throw as above.
  static std::shared_ptr<GrowingFile> open_if_there(const std::string& path, WaitForWriter wait);
  ~GrowingFile();
  GrowingFile(const GrowingFile&) = delete;
  GrowingFile& operator=(const GrowingFile&) = delete;

  // Up to `size` bytes from `offset`, as an AVIOContext's read callback
  // wants them: the count (> 0), or AVERROR_EOF once the writer has
  // finished and all is read, AVERROR_EXIT once it is gone (its file will
  // not be finished), or another AVERROR. Blocks while the writer has
  // written no more. Readers share one GrowingFile, each with its offset.
  int read_at(uint8_t* buffer, int size, int64_t offset);
  // From any thread: reads that wait, or would, end with AVERROR_EXIT (a
  // reader that is given up: the join failed while the writer still writes).
  void cancel() { cancelled_ = true; }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  WaitForWriter wait_;
  int fd_ = -1;
  std::atomic<bool> cancelled_{false};

  struct Opened {
    int fd;
  };
  GrowingFile(const std::string& path, WaitForWriter wait, Opened opened);
};

}  // namespace sp
