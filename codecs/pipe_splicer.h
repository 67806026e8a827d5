#pragma once
// Raw video to a live stdout pipe without copying it: each packet's pages
// are spliced into the pipe (vmsplice), not copied into pipe pages by
// write() (3.9 MB a 1024x960 RGBA frame: the whole of the live tail on the
// H100). The pipe then refers to the packet's memory, so the packet is held
// until the reader has read past it (FIONREAD): its pooled picture must not
// be reused under the reader.
extern "C" {
#include <libavcodec/packet.h>
}

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "codecs/ffmpeg_util.h"

namespace sp {

class PipeSplicer {
 public:
  // Whether `fd` is a pipe that vmsplice can write to.
  static bool usable(int fd);
  explicit PipeSplicer(int fd) : fd_(fd) {}
  // Waits (up to kReaderWait) for the reader to read what the pipe still
  // refers to, or to go away: freed memory may be overwritten (an allocator's
  // bookkeeping, a reused picture) before the reader gets it. Past the wait,
  // that memory is left allocated rather than risked.
  ~PipeSplicer();
  PipeSplicer(const PipeSplicer&) = delete;
  PipeSplicer& operator=(const PipeSplicer&) = delete;
  // Takes the packet's reference. 0, or an AVERROR (AVERROR(EPIPE): the reader went away).
  int write(AVPacket* packet);
  // Bytes that are not ours to hold (a muxer's buffer): copied into a buffer
  // of our own, reused once read, and spliced from there. `size`, or an AVERROR.
  int write_copy(const uint8_t* data, int size);

 private:
  struct Held {
    PacketPtr packet;           // or
    std::vector<uint8_t> copy;  // what the pipe refers to
    uint64_t end = 0;           // the byte count at its end
  };
  void release_read();
  bool reader_gone() const;
  int splice(const uint8_t* data, size_t size);

  int fd_;
  uint64_t written_ = 0;
  std::deque<Held> held_;
  std::vector<std::vector<uint8_t>> spare_;  // copies the reader is done with
};

}  // namespace sp
