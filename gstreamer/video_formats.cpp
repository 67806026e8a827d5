#include "gstreamer/video_formats.h"

namespace spgst {

void set_format_list(GstStructure* s, const char* const* names, size_t count) {
  GValue formats = G_VALUE_INIT, format = G_VALUE_INIT;
  gst_value_list_init(&formats, guint(count));
  g_value_init(&format, G_TYPE_STRING);
  for (size_t i = 0; i < count; ++i) {
    g_value_set_string(&format, names[i]);
    gst_value_list_append_value(&formats, &format);
  }
  gst_structure_set_value(s, "format", &formats);
  g_value_unset(&format);
  g_value_unset(&formats);
}

// As `stylepipe run` (codecs/ffmpeg_util.cpp): SMPTE 240M is read as BT.709
// (they differ in the fourth decimal), FCC as BT.601, and an unknown matrix
// as an untagged video's, by its height.
bool yuv_of(const GstVideoInfo& info, stylepipe::YuvImage* yuv, std::string* why) {
  yuv->format = GST_VIDEO_INFO_FORMAT(&info) == GST_VIDEO_FORMAT_NV12 ? stylepipe::YuvFormat::nv12
                                                                       : stylepipe::YuvFormat::i420;
  const GstVideoColorimetry& c = info.colorimetry;
  switch (c.matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT601:
    case GST_VIDEO_COLOR_MATRIX_FCC:
      yuv->matrix = stylepipe::YuvMatrix::bt601;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT709:
    case GST_VIDEO_COLOR_MATRIX_SMPTE240M:
      yuv->matrix = stylepipe::YuvMatrix::bt709;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      yuv->matrix = stylepipe::YuvMatrix::bt2020;
      break;
    case GST_VIDEO_COLOR_MATRIX_UNKNOWN:
      yuv->matrix = GST_VIDEO_INFO_HEIGHT(&info) <= 576 ? stylepipe::YuvMatrix::bt601 : stylepipe::YuvMatrix::bt709;
      break;
    default: {
      gchar* name = gst_video_colorimetry_to_string(&c);
      *why = std::string("no YUV conversion for the colour matrix of colorimetry ") + (name ? name : "?");
      g_free(name);
      return false;
    }
  }
  yuv->range = c.range == GST_VIDEO_COLOR_RANGE_0_255 ? stylepipe::YuvRange::full : stylepipe::YuvRange::limited;
  return true;
}

std::string describe_colour(const stylepipe::YuvImage& yuv) {
  const char* matrix = yuv.matrix == stylepipe::YuvMatrix::bt601   ? "BT.601"
                       : yuv.matrix == stylepipe::YuvMatrix::bt709 ? "BT.709"
                                                                   : "BT.2020";
  return std::string(" (") + matrix + (yuv.range == stylepipe::YuvRange::full ? ", full range)" : ", limited range)");
}

}  // namespace spgst
