// libgststylepipe.so: the plugin of the `stylepipe` element.
#include <gst/gst.h>

#include "gstreamer/gststylepipe.h"
#include "stylepipe/tools.h"

// GST_PLUGIN_DEFINE names the package (the plugin's "source module") by this macro.
#ifndef PACKAGE
#define PACKAGE "stylepipe"
#endif

static gboolean plugin_init(GstPlugin* plugin) { return GST_ELEMENT_REGISTER(stylepipe, plugin); }

// The repository states no licence yet (packaging/copyright): "Proprietary" until it does.
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, stylepipe,
                  "stylepipe video stylization (pencil, xbr, halftone, ...) on CUDA or the CPU", plugin_init,
                  stylepipe::kVersion, "Proprietary", "stylepipe", "stylepipe")
