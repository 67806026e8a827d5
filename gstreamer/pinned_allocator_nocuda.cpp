// A build without CUDA: frames stay in GStreamer's own system memory.
#include "gstreamer/pinned_allocator.h"

namespace spgst {

GstAllocator* pinned_allocator_new(int) { return nullptr; }

}  // namespace spgst
