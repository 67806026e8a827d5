#pragma once
// Page-locked (pinned) host memory for the frames the element exchanges in
// system memory while its chain runs on CUDA: offered upstream and used for
// its own output pool, so that the GPU copies frames straight from and into
// the buffers by DMA, with no copy through a staging buffer on the CPU and no
// page faulted in while a frame waits (HostStaging reads pinned buffers
// where they are). A CPU-only build has none (null).
#include <gst/gst.h>

namespace spgst {

// A new reference to an allocator of pinned memory, made while `device` is
// current; null where the build has no CUDA. Its memory is mapped like
// system memory.
GstAllocator* pinned_allocator_new(int device);

}  // namespace spgst
