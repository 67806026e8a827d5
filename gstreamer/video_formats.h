#pragma once
// What the element reads of video caps: the formats it lists, and a YUV
// input's layout and colour (the caps' colorimetry, as `stylepipe run`
// reads a video's colour tags).
#include <gst/video/video.h>

#include <cstddef>
#include <string>

#include "stylepipe/chain.h"

namespace spgst {

// `s`'s format field: the list of `names`, in that order of preference.
void set_format_list(GstStructure* s, const char* const* names, size_t count);

// A YUV input's format and colour from its caps; false (and why) for a
// matrix the conversion does not have.
bool yuv_of(const GstVideoInfo& info, stylepipe::YuvImage* yuv, std::string* why);

// " (BT.709, limited range)"
std::string describe_colour(const stylepipe::YuvImage& yuv);

}  // namespace spgst
