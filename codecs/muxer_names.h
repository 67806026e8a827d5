#pragma once
// Muxer families the writer treats specially, by FFmpeg's muxer names.
extern "C" {
#include <libavformat/avformat.h>
}

#include <cstring>

namespace sp {

inline bool is_named(const AVOutputFormat* f, const char* name) { return f && std::strcmp(f->name, name) == 0; }

// The ISO family writes variable frame rates faithfully, although FFmpeg
// does not flag it so.
inline bool is_mov_family(const AVOutputFormat* f) {
  for (const char* n : {"mp4", "mov", "ipod", "ismv", "3gp", "3g2", "psp", "f4v"})
    if (is_named(f, n)) return true;
  return false;
}

}  // namespace sp
