#pragma once
// One picture to one PNG file, through FFmpeg's PNG encoder (for stills such
// as the contact sheet of `stylepipe preview`; videos go through MediaWriter).
extern "C" {
#include <libavutil/frame.h>
}

#include <string>

namespace sp {

// Encodes `picture` (any pixel format the PNG encoder takes: rgb24, rgba,
// gray, ...) and writes it to `path`, replacing the file. Throws
// sp::Error(io_error) naming the path when it cannot be written.
void write_png(const AVFrame& picture, const std::string& path);

}  // namespace sp
