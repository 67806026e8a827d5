// Fuzz harness: a media file (any container and codec FFmpeg probes) read by
// sp::MediaReader from a memfd, its pictures through the CPU engine's chain.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/fuzz_chain.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  sp::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A memfd is a seekable file without a disk: demuxers that seek (mp4's
  // moov at the end, matroska's cues) take the same paths as with a file.
  const int fd = memfd_create("fuzz-media", MFD_CLOEXEC);
  if (fd < 0 || write(fd, data, size) != ssize_t(size)) {
    std::perror("media fuzz: memfd");
    std::abort();
  }
  sp::InputOptions options;
  options.url = "/proc/self/fd/" + std::to_string(fd);
  sp::fuzz::run_input_through_chain(options);
  close(fd);
  return 0;
}
