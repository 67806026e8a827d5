#include "codecs/pipe_splicer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "pipeline/log.h"

namespace sp {

bool PipeSplicer::usable(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

namespace {
constexpr std::chrono::seconds kReaderWait{10};
}

PipeSplicer::~PipeSplicer() {
  const auto deadline = std::chrono::steady_clock::now() + kReaderWait;
  for (;;) {
    release_read();
    if (held_.empty() || reader_gone()) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int unread = 0;
  if (ioctl(fd_, FIONREAD, &unread) != 0) unread = -1;
  log_warning("output pipe: the reader has not read the last {} bytes after {} s; leaving their memory allocated",
              unread, kReaderWait.count());
  for (Held& h : held_) {
    (void)h.packet.release();                                  // NOLINT: deliberately leaked, see above
    (void)new std::vector<uint8_t>(std::move(h.copy));         // NOLINT: likewise
  }
}

bool PipeSplicer::reader_gone() const {
  pollfd p{fd_, POLLOUT, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

void PipeSplicer::release_read() {
  int unread = 0;
  if (ioctl(fd_, FIONREAD, &unread) != 0) return;  // keep holding: safe, only memory
  const uint64_t read = written_ - uint64_t(unread);
  while (!held_.empty() && held_.front().end <= read) {
    if (!held_.front().copy.empty()) spare_.push_back(std::move(held_.front().copy));
    held_.pop_front();
  }
}

int PipeSplicer::splice(const uint8_t* data, size_t size) {
  iovec piece{const_cast<uint8_t*>(data), size};
  while (piece.iov_len > 0) {
    const ssize_t n = vmsplice(fd_, &piece, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return AVERROR(errno);
    piece.iov_base = static_cast<uint8_t*>(piece.iov_base) + n;
    piece.iov_len -= size_t(n);
  }
  written_ += size;
  return 0;
}

int PipeSplicer::write(AVPacket* packet) {
  release_read();
  // The pipe will refer to this memory: it must be the packet's own, to hold.
  int r = av_packet_make_refcounted(packet);
  if (r >= 0) r = splice(packet->data, size_t(packet->size));
  if (r < 0) {
    av_packet_unref(packet);
    return r;
  }
  Held held;
  held.packet = make_packet();
  av_packet_move_ref(held.packet.get(), packet);
  held.end = written_;
  held_.push_back(std::move(held));
  return 0;
}

int PipeSplicer::write_copy(const uint8_t* data, int size) {
  release_read();
  Held held;
  if (!spare_.empty()) {
    held.copy = std::move(spare_.back());
    spare_.pop_back();
  }
  held.copy.assign(data, data + size);  // a spare's capacity: no allocation once warm
  if (const int r = splice(held.copy.data(), held.copy.size()); r < 0) return r;
  held.end = written_;
  held_.push_back(std::move(held));
  return size;
}

}  // namespace sp
