// Fuzz harness: raw video or YUV4MPEG from a pipe, as a live source gives it
// (`-f rawvideo --pix-fmt F --size WxH -i -`, `-f yuv4mpegpipe -i -`).
//
// Input: a 4-byte header, then the stream.
//   byte 0: bit 0 = yuv4mpegpipe (else rawvideo), bit 1 = --low-latency,
//           bits 2..7 pick the raw pixel format from kRawFormats
//   bytes 1, 2: raw width and height, 1..256
//   byte 3: raw frame rate, 1..256
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

#include "tests/fuzz/fuzz_chain.h"

namespace {

// Layouts the reader takes as they are, and some it converts with swscale.
constexpr const char* kRawFormats[] = {"rgba", "bgr0", "rgb24", "gray", "yuv420p", "yuv444p", "nv12",
                                       "p010le", "yuyv422", "yuv422p10le", "pal8", "gbrp", "ya8", "rgb565le"};
constexpr size_t kHeaderBytes = 4;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  sp::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kHeaderBytes) return 0;
  const uint8_t mode = data[0];
  sp::InputOptions options;
  options.low_latency = mode & 2;
  if (mode & 1) {
    options.format = "yuv4mpegpipe";
  } else {
    options.format = "rawvideo";
    options.pixel_format = kRawFormats[(mode >> 2) % std::size(kRawFormats)];
    options.size = sp::Size{data[1] + 1, data[2] + 1};
    options.rate = data[3] + 1;
  }
  const uint8_t* stream = data + kHeaderBytes;
  const size_t stream_bytes = size - kHeaderBytes;

  // The whole stream goes into the pipe before reading starts, so the pipe
  // must hold it (-max_len stays below the 1 MiB pipe-max-size default).
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0 ||
      fcntl(ends[1], F_SETPIPE_SZ, int(std::max<size_t>(stream_bytes, 4096))) < 0 ||
      write(ends[1], stream, stream_bytes) != ssize_t(stream_bytes)) {
    std::perror("pipe fuzz: pipe");
    std::abort();
  }
  close(ends[1]);
  options.url = "pipe:" + std::to_string(ends[0]);
  sp::fuzz::run_input_through_chain(options);
  close(ends[0]);
  return 0;
}
