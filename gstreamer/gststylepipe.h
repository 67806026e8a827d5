#pragma once
// The `stylepipe` element: a GstBaseTransform that runs a stylepipe chain on
// every frame (gstreamer/gststylepipe.cpp says how).
#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_STYLEPIPE (gst_stylepipe_get_type())
G_DECLARE_FINAL_TYPE(GstStylepipe, gst_stylepipe, GST, STYLEPIPE, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(stylepipe);

G_END_DECLS
