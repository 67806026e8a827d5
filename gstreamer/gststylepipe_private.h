#pragma once
// What gststylepipe.cpp and gststylepipe_caps.cpp share: the instance's C++
// members and their accessors (not installed; the plugin exports only its
// registration, gstreamer/plugin.map).
#include <gst/video/video.h>

#include <memory>
#include <mutex>
#include <string>

#include "gstreamer/cuda_memory.h"
#include "gstreamer/engine.h"
#include "gstreamer/gststylepipe.h"
#include "gstreamer/latency.h"
#include "gstreamer/video_formats.h"

GST_DEBUG_CATEGORY_EXTERN(gst_stylepipe_debug);

namespace spgst::element {

constexpr int kDefaultDeviceId = -1;

// The formats each side takes, in order of preference: RGBA goes straight
// into the chain; NV12 and I420 (decoders' output) are converted by the chain
// where they are; BGRx (ximagesrc) costs a host copy. The pad templates and
// the caps the element offers (gststylepipe_caps.cpp) say the same lists.
inline constexpr const char* kSystemSinkFormats[] = {"RGBA", "NV12", "I420", "BGRx"};
inline constexpr const char* kCudaSinkFormats[] = {"RGBA", "NV12", "I420"};
#define STYLEPIPE_SYSTEM_SINK_CAPS GST_VIDEO_CAPS_MAKE("{ RGBA, NV12, I420, BGRx }")
#define STYLEPIPE_CUDA_SINK_CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES("memory:CUDAMemory", "{ RGBA, NV12, I420 }")
#define STYLEPIPE_SYSTEM_SRC_CAPS GST_VIDEO_CAPS_MAKE("RGBA")
#define STYLEPIPE_CUDA_SRC_CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES("memory:CUDAMemory", "RGBA")

// What the instance holds besides GObject's fields (C++ members).
struct Private {
  // Properties: read under the object lock, applied at NULL -> READY.
  std::string config_path, pipeline_text;
  spgst::BackendChoice backend = spgst::BackendChoice::automatic;
  int cuda_device_id = kDefaultDeviceId;

  // Made at NULL -> READY, dropped at READY -> NULL. Caps and context
  // queries come from any thread: they take a reference under the mutex.
  std::mutex engine_mutex;
  std::shared_ptr<spgst::Engine> engine;
  std::shared_ptr<spgst::CudaMemory> cuda;  // the CUDA backend with CUDA memory support
  GstAllocator* pinned = nullptr;           // the CUDA backend: page-locked system memory
  bool warned_fallback = false, warned_cuda_memory = false, warned_foreign = false;
  int neighbours_device = -1;  // the device of a CUDA context handed in before READY

  // The negotiated caps (streaming thread).
  GstVideoInfo in_info{}, out_info{};
  spgst::Layout layout = spgst::Layout::rgba;
  stylepipe::YuvImage yuv;  // for Layout::yuv: format and colour (planes set per frame)
  bool cuda_caps = false;        // memory:CUDAMemory on both pads
  uint64_t staged_cuda_frames = 0;  // CUDA memory of another context, staged through host memory
  spgst::LatencySamples latency;     // sink pad to src pad, since READY
};

}  // namespace spgst::element

struct _GstStylepipe {
  GstBaseTransform parent;
  spgst::element::Private* priv;
};

namespace spgst::element {

inline std::shared_ptr<spgst::Engine> engine_of(GstStylepipe* self) {
  std::lock_guard lock(self->priv->engine_mutex);
  return self->priv->engine;
}

inline std::shared_ptr<spgst::CudaMemory> cuda_of(GstStylepipe* self) {
  std::lock_guard lock(self->priv->engine_mutex);
  return self->priv->cuda;
}

// A new reference to the pinned allocator, or null (the CPU backend, or not READY).
inline GstAllocator* pinned_of(GstStylepipe* self) {
  std::lock_guard lock(self->priv->engine_mutex);
  return self->priv->pinned ? GST_ALLOCATOR(gst_object_ref(self->priv->pinned)) : nullptr;
}

inline bool has_cuda_feature(GstCaps* caps, guint index = 0) {
  GstCapsFeatures* features = gst_caps_get_features(caps, index);
  return features && gst_caps_features_contains(features, spgst::kCudaMemoryFeature);
}

// GstBaseTransform's own implementations, which ours extend.
GstBaseTransformClass* base_transform_class();

// Caps and allocation (gststylepipe_caps.cpp).
GstCaps* transform_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps, GstCaps* filter);
GstCaps* fixate_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps, GstCaps* othercaps);
gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* outcaps);
gboolean get_unit_size(GstBaseTransform* trans, GstCaps* caps, gsize* size);
gboolean propose_allocation(GstBaseTransform* trans, GstQuery* decide_query, GstQuery* query);
gboolean decide_allocation(GstBaseTransform* trans, GstQuery* query);

}  // namespace spgst::element
