#pragma once
// What the media and pipe harnesses do with an opened input: every picture
// through the CPU frame engine with configs/example.yaml's chain (a 4x area
// downscale, then a 4x nearest upscale), as the transcoder's processor does
// (a new engine whenever the picture's size or layout changes).
#include <cstdint>

#include "codecs/media_reader.h"

namespace sp::fuzz {

// Pictures decoded per input at most: enough for size changes and
// reconfiguration, few enough to keep each run short.
constexpr int64_t kMaxFrames = 12;
// Larger pictures are decoded but not run through the chain: a header may
// claim 16384x16384, and seconds per input would starve the search.
constexpr int64_t kMaxChainPixels = 512 * 512;

// Reads `options` to the end through the chain. sp::Error for bad data,
// usage or a missing decoder is a fine outcome and is swallowed; a crash,
// another exception or another exit code is a finding (abort).
void run_input_through_chain(const InputOptions& options);

// Quiets stylepipe's and FFmpeg's logs: the fuzzer's own output stays readable.
void quiet_logs();

}  // namespace sp::fuzz
