// The `stylepipe` element: a stylepipe chain (include/stylepipe/chain.h) on
// every frame of a video stream.
//
// - The config (`config` file or inline `pipeline`) is read when the element
//   goes from NULL to READY: its errors fail that state change with
//   GST_ELEMENT_ERROR, whose text has the config's file:line:col.
// - System memory: RGBA, NV12, I420 or BGRx in (BGRx is turned into RGBA
//   first, one host copy; NV12 and I420 are converted by the chain, with the
//   caps' colour matrix and range), RGBA out; the input is read at its own
//   row strides (GstVideoMeta), never copied on the CPU. On the CUDA backend
//   each frame is staged through pinned memory to the GPU and back (YUV as it
//   is, 1.5 bytes a pixel). The output size is the chain's (Chain::output_size).
// - CUDA memory (`video/x-raw(memory:CUDAMemory)`, RGBA, NV12 or I420 in
//   (nvh264dec's NV12 as it decodes it), RGBA out; CUDA builds with
//   gstreamer-cuda-1.0, the CUDA backend): the chain reads and
//   writes the frames where they are, on the context the element shares with
//   its neighbours (gstreamer/cuda_memory.h), and finishes before it pushes.
// - The transform is synchronous: a frame leaves before the next comes in, so
//   the element holds no frames in flight and adds no latency (LATENCY query).
//   QoS is on: late frames are dropped before the chain sees them.
// - Temporal stages see the frames in order; FLUSH_STOP and a new SEGMENT
//   reset them (the next frame is a first frame).
#include "gstreamer/gststylepipe.h"

#include <gst/video/video.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "gstreamer/cuda_memory.h"
#include "gstreamer/engine.h"
#include "gstreamer/latency.h"
#include "gstreamer/pinned_allocator.h"
#include "gstreamer/video_formats.h"
#include "stylepipe/errors.h"
#include "stylepipe/session.h"

GST_DEBUG_CATEGORY(gst_stylepipe_debug);
#define GST_CAT_DEFAULT gst_stylepipe_debug

namespace {

enum {
  PROP_0,
  PROP_CONFIG,
  PROP_PIPELINE,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_STATS,
};

constexpr int kDefaultDeviceId = -1;

// The formats each side takes, in order of preference: RGBA goes straight
// into the chain; NV12 and I420 (decoders' output) are converted by the chain
// where they are; BGRx (ximagesrc) costs a host copy.
constexpr const char* kSystemSinkFormats[] = {"RGBA", "NV12", "I420", "BGRx"};
constexpr const char* kCudaSinkFormats[] = {"RGBA", "NV12", "I420"};
#define STYLEPIPE_SYSTEM_SINK_CAPS GST_VIDEO_CAPS_MAKE("{ RGBA, NV12, I420, BGRx }")
#define STYLEPIPE_CUDA_SINK_CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES("memory:CUDAMemory", "{ RGBA, NV12, I420 }")
#define STYLEPIPE_SYSTEM_SRC_CAPS GST_VIDEO_CAPS_MAKE("RGBA")
#define STYLEPIPE_CUDA_SRC_CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES("memory:CUDAMemory", "RGBA")

// CUDA memory first where the build has it, then system memory.
GstPadTemplate* pad_template(const char* name, GstPadDirection direction, const char* cuda_caps,
                             const char* system_caps) {
  const std::string text =
      spgst::cuda_memory_built() ? std::string(cuda_caps) + "; " + system_caps : std::string(system_caps);
  GstCaps* caps = gst_caps_from_string(text.c_str());
  GstPadTemplate* templ = gst_pad_template_new(name, direction, GST_PAD_ALWAYS, caps);
  gst_caps_unref(caps);
  return templ;
}

bool has_cuda_feature(GstCaps* caps, guint index = 0) {
  GstCapsFeatures* features = gst_caps_get_features(caps, index);
  return features && gst_caps_features_contains(features, spgst::kCudaMemoryFeature);
}

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

}  // namespace

struct _GstStylepipe {
  GstBaseTransform parent;
  Private* priv;
};

#define gst_stylepipe_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE(GstStylepipe, gst_stylepipe, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(gst_stylepipe_debug, "stylepipe", 0, "stylepipe video stylization"));
GST_ELEMENT_REGISTER_DEFINE(stylepipe, "stylepipe", GST_RANK_NONE, GST_TYPE_STYLEPIPE);

#define GST_TYPE_STYLEPIPE_BACKEND (gst_stylepipe_backend_get_type())
static GType gst_stylepipe_backend_get_type() {
  static GType type = 0;
  static const GEnumValue values[] = {
      {int(spgst::BackendChoice::automatic), "CUDA where a device is available, else the CPU (with a warning)", "auto"},
      {int(spgst::BackendChoice::cuda), "CUDA (an element error where it is not available)", "cuda"},
      {int(spgst::BackendChoice::cpu), "The CPU", "cpu"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstStylepipeBackend", values));
  return type;
}

namespace {

std::shared_ptr<spgst::Engine> engine_of(GstStylepipe* self) {
  std::lock_guard lock(self->priv->engine_mutex);
  return self->priv->engine;
}

std::shared_ptr<spgst::CudaMemory> cuda_of(GstStylepipe* self) {
  std::lock_guard lock(self->priv->engine_mutex);
  return self->priv->cuda;
}

// A new reference to the pinned allocator, or null (the CPU backend, or not READY).
GstAllocator* pinned_of(GstStylepipe* self) {
  std::lock_guard lock(self->priv->engine_mutex);
  return self->priv->pinned ? GST_ALLOCATOR(gst_object_ref(self->priv->pinned)) : nullptr;
}

// A stylepipe error as an element error: config problems are SETTINGS (the
// text is every problem as `file:line:col: error: message`), unreadable files
// NOT_FOUND / OPEN_READ, devices FAILED.
void post_error(GstStylepipe* self, const std::exception& e) {
  const char* when = dynamic_cast<const stylepipe::DeviceError*>(&e) ? "stylepipe device" : "stylepipe config";
  const std::string text = std::string(when) + ": " + e.what();
  if (dynamic_cast<const stylepipe::ConfigError*>(&e)) {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("%s", text.c_str()), ("invalid stylepipe config"));
  } else if (dynamic_cast<const stylepipe::MediaError*>(&e)) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("%s", text.c_str()), ("the config could not be read"));
  } else if (dynamic_cast<const stylepipe::DeviceError*>(&e)) {
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("%s", text.c_str()), ("the device is not available"));
  } else {
    GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("%s", text.c_str()), (nullptr));
  }
}

// NULL -> READY: the session and the chain, or an element error.
gboolean open_engine(GstStylepipe* self) {
  Private& p = *self->priv;
  spgst::EngineOptions options;
  GST_OBJECT_LOCK(self);
  options.config_path = p.config_path;
  options.pipeline_text = p.pipeline_text;
  options.backend = p.backend;
  options.cuda_device = p.cuda_device_id >= 0 ? p.cuda_device_id : p.neighbours_device;
  GST_OBJECT_UNLOCK(self);

  std::string fallback;
  std::shared_ptr<spgst::Engine> engine;
  try {
    engine = std::make_shared<spgst::Engine>(options, &fallback);
    // Stages are made here, not at the first frame: their own refusals come now.
    const bool temporal = engine->temporal();
    GST_INFO_OBJECT(self, "chain [%s] on %s%s", engine->stage_list().c_str(), engine->device_name().c_str(),
                    temporal ? " (temporal: frames in order, reset on flush and new segments)" : "");
  } catch (const std::exception& e) {
    post_error(self, e);
    return FALSE;
  }
  if (!fallback.empty() && !p.warned_fallback) {
    p.warned_fallback = true;
    GST_ELEMENT_WARNING(self, RESOURCE, FAILED, ("stylepipe runs on the CPU: %s", fallback.c_str()),
                        ("backend=auto found no CUDA device; set backend=cpu to choose the CPU without this warning"));
  }
  // CUDA memory: the chain's context, shared before upstream looks for one.
  std::shared_ptr<spgst::CudaMemory> cuda;
  if (engine->backend() == stylepipe::Backend::cuda && spgst::cuda_memory_built()) {
    try {
      cuda = std::make_shared<spgst::CudaMemory>(GST_ELEMENT(self), engine->cuda_device());
      cuda->post_context();
      GST_INFO_OBJECT(self, "CUDA memory on %s", cuda->describe().c_str());
    } catch (const std::exception& e) {
      if (!p.warned_cuda_memory) {
        p.warned_cuda_memory = true;
        GST_ELEMENT_WARNING(self, RESOURCE, FAILED, ("stylepipe takes system memory only: %s", e.what()),
                            ("the chain runs on %s; frames are staged through pinned memory",
                             engine->device_name().c_str()));
      }
    }
  }
  GstAllocator* pinned =
      engine->backend() == stylepipe::Backend::cuda ? spgst::pinned_allocator_new(engine->cuda_device()) : nullptr;
  p.latency.clear();
  std::lock_guard lock(p.engine_mutex);
  p.engine = std::move(engine);
  p.cuda = std::move(cuda);
  p.pinned = pinned;
  return TRUE;
}

void close_engine(GstStylepipe* self) {
  std::shared_ptr<spgst::Engine> engine;
  std::shared_ptr<spgst::CudaMemory> cuda;
  {
    std::lock_guard lock(self->priv->engine_mutex);
    engine.swap(self->priv->engine);
    cuda.swap(self->priv->cuda);
    if (self->priv->pinned) gst_object_unref(self->priv->pinned);
    self->priv->pinned = nullptr;
  }
  // The last reference goes here, or with a caps query still holding one.
}

GstStructure* stats_of(GstStylepipe* self) {
  std::shared_ptr<spgst::Engine> engine = engine_of(self);
  if (!engine) return gst_structure_new_empty("stylepipe-stats");
  const spgst::EngineStats s = engine->stats();
  GST_OBJECT_LOCK(self);
  const bool cuda_caps = self->priv->cuda_caps;
  const guint64 staged = self->priv->staged_cuda_frames;
  GST_OBJECT_UNLOCK(self);
  std::shared_ptr<spgst::CudaMemory> cuda = cuda_of(self);
  const spgst::LatencySamples::Summary latency = self->priv->latency.summary();
  GstStructure* stats = gst_structure_new(
      "stylepipe-stats", "device", G_TYPE_STRING, engine->device_name().c_str(), "stages", G_TYPE_STRING,
      engine->stage_list().c_str(), "memory", G_TYPE_STRING, cuda_caps ? "CUDAMemory" : "system", "cuda-context",
      G_TYPE_STRING, cuda ? cuda->describe().c_str() : "", "frames", G_TYPE_UINT64, guint64(s.frames),
      "device-frames", G_TYPE_UINT64, guint64(s.device_frames), "resets", G_TYPE_UINT64, guint64(s.resets),
      "converted-frames", G_TYPE_UINT64, guint64(s.converted_frames), "yuv-frames", G_TYPE_UINT64,
      guint64(s.yuv_frames), "uploads", G_TYPE_UINT64, guint64(s.uploads),
      "downloads", G_TYPE_UINT64, guint64(s.downloads), "pinned-frames", G_TYPE_UINT64, guint64(s.pinned_frames),
      "staged-cuda-frames", G_TYPE_UINT64, staged, nullptr);
  gst_structure_set(stats, "latency-frames", G_TYPE_UINT64, guint64(latency.frames), "latency-p50-us", G_TYPE_UINT64,
                    guint64(latency.p50_us), "latency-p99-us", G_TYPE_UINT64, guint64(latency.p99_us),
                    "latency-max-us", G_TYPE_UINT64, guint64(latency.max_us), nullptr);
  return stats;
}

std::optional<double> stream_seconds(GstBaseTransform* trans, GstBuffer* buffer) {
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  if (!GST_CLOCK_TIME_IS_VALID(pts) || trans->segment.format != GST_FORMAT_TIME) return std::nullopt;
  const guint64 stream_time = gst_segment_to_stream_time(&trans->segment, GST_FORMAT_TIME, pts);
  if (!GST_CLOCK_TIME_IS_VALID(stream_time)) return std::nullopt;
  return double(stream_time) / double(GST_SECOND);
}

// The other side's size for one caps structure: exact where `width` and
// `height` are fixed and the chain takes them (sink -> src), any size
// otherwise. False where the chain refuses the size.
bool map_size(GstStylepipe* self, GstPadDirection direction, GstStructure* s) {
  int width = 0, height = 0;
  std::shared_ptr<spgst::Engine> engine = engine_of(self);
  if (direction == GST_PAD_SINK && engine && gst_structure_get_int(s, "width", &width) &&
      gst_structure_get_int(s, "height", &height)) {
    try {
      const stylepipe::Size out = engine->output_size({width, height});
      gst_structure_set(s, "width", G_TYPE_INT, out.width, "height", G_TYPE_INT, out.height, nullptr);
      return true;
    } catch (const std::exception& e) {
      GST_WARNING_OBJECT(self, "the chain takes no %dx%d input: %s", width, height, e.what());
      return false;
    }
  }
  gst_structure_set(s, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT, "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, nullptr);
  return true;
}

}  // namespace

static GstCaps* gst_stylepipe_transform_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps,
                                             GstCaps* filter) {
  GstStylepipe* self = GST_STYLEPIPE(trans);
  // CUDA memory only where the chain runs on CUDA with CUDA memory support
  // (before READY, what the templates say).
  const bool opened = engine_of(self) != nullptr;
  const bool cuda_memory = !opened || cuda_of(self) != nullptr;
  GstCaps* result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
    const bool cuda_structure = has_cuda_feature(caps, i);
    if (cuda_structure && !cuda_memory) continue;
    GstStructure* s = gst_structure_copy(gst_caps_get_structure(caps, i));
    GstCapsFeatures* features = gst_caps_features_copy(gst_caps_get_features(caps, i));
    if (direction == GST_PAD_SINK) {
      gst_structure_set(s, "format", G_TYPE_STRING, "RGBA", nullptr);
    } else if (cuda_structure) {
      spgst::set_format_list(s, kCudaSinkFormats, G_N_ELEMENTS(kCudaSinkFormats));
    } else {
      spgst::set_format_list(s, kSystemSinkFormats, G_N_ELEMENTS(kSystemSinkFormats));
    }
    gst_structure_remove_fields(s, "colorimetry", "chroma-site", nullptr);
    if (!map_size(self, direction, s)) {
      gst_structure_free(s);
      gst_caps_features_free(features);
      continue;
    }
    result = gst_caps_merge_structure_full(result, s, features);
  }
  if (filter) {
    GstCaps* filtered = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = filtered;
  }
  GST_DEBUG_OBJECT(self, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, direction == GST_PAD_SINK ? "sink" : "src",
                   caps, result);
  return result;
}

static GstCaps* gst_stylepipe_fixate_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps,
                                          GstCaps* othercaps) {
  GstStylepipe* self = GST_STYLEPIPE(trans);
  othercaps = gst_caps_truncate(othercaps);
  othercaps = gst_caps_make_writable(othercaps);
  GstStructure* out = gst_caps_get_structure(othercaps, 0);
  const GstStructure* in = gst_caps_get_structure(caps, 0);
  int width = 0, height = 0;
  std::shared_ptr<spgst::Engine> engine = engine_of(self);
  if (direction == GST_PAD_SINK && engine && gst_structure_get_int(in, "width", &width) &&
      gst_structure_get_int(in, "height", &height)) {
    try {
      const stylepipe::Size size = engine->output_size({width, height});
      gst_structure_fixate_field_nearest_int(out, "width", size.width);
      gst_structure_fixate_field_nearest_int(out, "height", size.height);
    } catch (const std::exception& e) {
      GST_WARNING_OBJECT(self, "the chain takes no %dx%d input: %s", width, height, e.what());
    }
  }
  int num = 0, den = 0;
  if (gst_structure_get_fraction(in, "framerate", &num, &den))
    gst_structure_fixate_field_nearest_fraction(out, "framerate", num, den);
  if (gst_structure_get_fraction(in, "pixel-aspect-ratio", &num, &den) && gst_structure_has_field(out, "pixel-aspect-ratio"))
    gst_structure_fixate_field_nearest_fraction(out, "pixel-aspect-ratio", num, den);
  othercaps = gst_caps_fixate(othercaps);
  GST_DEBUG_OBJECT(self, "fixated to %" GST_PTR_FORMAT, othercaps);
  return othercaps;
}

static gboolean gst_stylepipe_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* outcaps) {
  GstStylepipe* self = GST_STYLEPIPE(trans);
  Private& p = *self->priv;
  GstVideoInfo in, out;
  if (!gst_video_info_from_caps(&in, incaps) || !gst_video_info_from_caps(&out, outcaps)) {
    GST_WARNING_OBJECT(self, "caps that are not raw video: %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps, outcaps);
    return FALSE;
  }
  std::shared_ptr<spgst::Engine> engine = engine_of(self);
  if (!engine) return FALSE;
  try {
    const stylepipe::Size expected = engine->output_size({GST_VIDEO_INFO_WIDTH(&in), GST_VIDEO_INFO_HEIGHT(&in)});
    if (expected.width != GST_VIDEO_INFO_WIDTH(&out) || expected.height != GST_VIDEO_INFO_HEIGHT(&out)) {
      GST_WARNING_OBJECT(self, "the chain makes %dx%d of %dx%d, not %dx%d", expected.width, expected.height,
                         GST_VIDEO_INFO_WIDTH(&in), GST_VIDEO_INFO_HEIGHT(&in), GST_VIDEO_INFO_WIDTH(&out),
                         GST_VIDEO_INFO_HEIGHT(&out));
      return FALSE;
    }
  } catch (const std::exception& e) {
    GST_WARNING_OBJECT(self, "the chain takes no %dx%d input: %s", GST_VIDEO_INFO_WIDTH(&in),
                       GST_VIDEO_INFO_HEIGHT(&in), e.what());
    return FALSE;
  }
  if (GST_VIDEO_INFO_FORMAT(&out) != GST_VIDEO_FORMAT_RGBA) return FALSE;
  const bool cuda_caps = has_cuda_feature(incaps);
  if (cuda_caps != has_cuda_feature(outcaps) || (cuda_caps && !cuda_of(self))) {
    GST_WARNING_OBJECT(self, "CUDA memory on one side only, or without CUDA memory support");
    return FALSE;
  }
  std::string yuv_note;
  switch (GST_VIDEO_INFO_FORMAT(&in)) {
    case GST_VIDEO_FORMAT_RGBA:
      p.layout = spgst::Layout::rgba;
      break;
    case GST_VIDEO_FORMAT_BGRx:
      if (cuda_caps) return FALSE;
      p.layout = spgst::Layout::bgrx;
      break;
    case GST_VIDEO_FORMAT_NV12:
    case GST_VIDEO_FORMAT_I420: {
      std::string why;
      if (!spgst::yuv_of(in, &p.yuv, &why)) {
        GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("stylepipe: %s", why.c_str()), ("caps %" GST_PTR_FORMAT, incaps));
        return FALSE;
      }
      p.layout = spgst::Layout::yuv;
      yuv_note = spgst::describe_colour(p.yuv);
      break;
    }
    default:
      return FALSE;
  }
  p.in_info = in;
  p.out_info = out;
  GST_OBJECT_LOCK(self);
  p.cuda_caps = cuda_caps;
  GST_OBJECT_UNLOCK(self);
  GST_INFO_OBJECT(self, "%s%s %dx%d -> RGBA %dx%d on %s, %s", gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&in)),
                  yuv_note.c_str(), GST_VIDEO_INFO_WIDTH(&in), GST_VIDEO_INFO_HEIGHT(&in), GST_VIDEO_INFO_WIDTH(&out),
                  GST_VIDEO_INFO_HEIGHT(&out), engine->device_name().c_str(),
                  cuda_caps ? "CUDA memory in place" : "system memory");
  return TRUE;
}

static gboolean gst_stylepipe_get_unit_size(GstBaseTransform*, GstCaps* caps, gsize* size) {
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps)) return FALSE;
  *size = GST_VIDEO_INFO_SIZE(&info);
  return TRUE;
}

// Upstream may give padded rows (GstVideoMeta): a video pool where it has none.
static gboolean gst_stylepipe_propose_allocation(GstBaseTransform* trans, GstQuery* decide_query, GstQuery* query) {
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->propose_allocation(trans, decide_query, query)) return FALSE;
  if (decide_query == nullptr) return TRUE;  // passthrough: never, but that is the base class's contract
  GstCaps* caps = nullptr;
  gst_query_parse_allocation(query, &caps, nullptr);
  GstVideoInfo info;
  if (caps == nullptr || !gst_video_info_from_caps(&info, caps)) return FALSE;
  if (has_cuda_feature(caps)) {
    // Upstream (a decoder) writes its frames straight into buffers of the chain's context.
    std::shared_ptr<spgst::CudaMemory> cuda = cuda_of(GST_STYLEPIPE(trans));
    return cuda && cuda->propose_pool(query, caps);
  }
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
  // On CUDA, upstream writes into pinned memory, which the GPU reads by DMA.
  GstAllocator* pinned = pinned_of(GST_STYLEPIPE(trans));
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  if (pinned) gst_query_add_allocation_param(query, pinned, &params);
  if (pinned || gst_query_get_n_allocation_pools(query) == 0) {
    GstBufferPool* pool = gst_video_buffer_pool_new();
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, guint(GST_VIDEO_INFO_SIZE(&info)), 0, 0);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (pinned) gst_buffer_pool_config_set_allocator(config, pinned, &params);
    const bool configured = gst_buffer_pool_set_config(pool, config);
    if (configured) gst_query_add_allocation_pool(query, pool, guint(GST_VIDEO_INFO_SIZE(&info)), 0, 0);
    gst_object_unref(pool);
    if (!configured) {
      if (pinned) gst_object_unref(pinned);
      return FALSE;
    }
  }
  if (pinned) gst_object_unref(pinned);
  return TRUE;
}

// The output buffers: downstream's pool, else a video pool of our own.
static gboolean gst_stylepipe_decide_allocation(GstBaseTransform* trans, GstQuery* query) {
  GstCaps* outcaps = nullptr;
  gst_query_parse_allocation(query, &outcaps, nullptr);
  GstVideoInfo info;
  if (outcaps == nullptr || !gst_video_info_from_caps(&info, outcaps)) return FALSE;
  if (has_cuda_feature(outcaps)) {
    std::shared_ptr<spgst::CudaMemory> cuda = cuda_of(GST_STYLEPIPE(trans));
    if (!cuda || !cuda->decide_pool(query, outcaps)) return FALSE;
    return GST_BASE_TRANSFORM_CLASS(parent_class)->decide_allocation(trans, query);
  }

  GstAllocator* allocator = nullptr;
  GstAllocationParams params;
  const bool have_params = gst_query_get_n_allocation_params(query) > 0;
  if (have_params)
    gst_query_parse_nth_allocation_param(query, 0, &allocator, &params);
  else
    gst_allocation_params_init(&params);

  GstBufferPool* pool = nullptr;
  guint size = guint(GST_VIDEO_INFO_SIZE(&info)), min = 0, max = 0;
  const bool have_pool = gst_query_get_n_allocation_pools(query) > 0;
  if (have_pool) {
    gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
    size = MAX(size, guint(GST_VIDEO_INFO_SIZE(&info)));
  }
  if (pool == nullptr) {
    // Our own pool: on CUDA, of pinned memory, which the GPU writes by DMA
    // (unless downstream asked for an allocator of its own).
    pool = gst_video_buffer_pool_new();
    if (allocator == nullptr) allocator = pinned_of(GST_STYLEPIPE(trans));
  }
  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, outcaps, size, min, max);
  gst_buffer_pool_config_set_allocator(config, allocator, &params);
  if (gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr))
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config(pool, config)) {
    // A pool that wants its own terms: take them where they still fit the frames.
    config = gst_buffer_pool_get_config(pool);
    if (!gst_buffer_pool_config_validate_params(config, outcaps, size, min, max) ||
        !gst_buffer_pool_set_config(pool, config)) {
      GST_WARNING_OBJECT(trans, "the output pool refuses its configuration");
      gst_object_unref(pool);
      if (allocator) gst_object_unref(allocator);
      return FALSE;
    }
  }
  if (have_params)
    gst_query_set_nth_allocation_param(query, 0, allocator, &params);
  else
    gst_query_add_allocation_param(query, allocator, &params);
  if (allocator) gst_object_unref(allocator);
  if (have_pool)
    gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool(query, pool, size, min, max);
  gst_object_unref(pool);
  return GST_BASE_TRANSFORM_CLASS(parent_class)->decide_allocation(trans, query);
}

static GstFlowReturn gst_stylepipe_transform(GstBaseTransform* trans, GstBuffer* inbuf, GstBuffer* outbuf) {
  GstStylepipe* self = GST_STYLEPIPE(trans);
  Private& p = *self->priv;
  std::shared_ptr<spgst::Engine> engine = engine_of(self);
  if (!engine) return GST_FLOW_FLUSHING;

  // CUDA memory of the chain's context: mapped as device pointers, run in
  // place on the element's stream, finished before the buffer is pushed.
  // Other CUDA memory (another context) is mapped to host memory by
  // GStreamer and staged like system memory, with a warning once.
  std::shared_ptr<spgst::CudaMemory> cuda = p.cuda_caps ? cuda_of(self) : nullptr;
  const bool in_place = cuda && cuda->is_ours(inbuf) && cuda->is_ours(outbuf);
  if (cuda && !in_place) {
    GST_OBJECT_LOCK(self);
    ++p.staged_cuda_frames;
    GST_OBJECT_UNLOCK(self);
    if (!p.warned_foreign) {
      p.warned_foreign = true;
      GST_ELEMENT_WARNING(self, STREAM, FAILED,
                          ("stylepipe stages CUDA memory of another CUDA context through host memory"),
                          ("the chain runs on %s; share it with the neighbours (its context is posted and "
                           "answered to queries) to keep frames in place",
                           cuda->describe().c_str()));
    }
  }
  if (in_place) cuda->wait_for_writers(inbuf);
  const GstMapFlags read = in_place ? spgst::CudaMemory::device_map(GST_MAP_READ) : GST_MAP_READ;
  const GstMapFlags write = in_place ? spgst::CudaMemory::device_map(GST_MAP_WRITE) : GST_MAP_WRITE;
  GstVideoFrame in, out;
  if (!gst_video_frame_map(&in, &p.in_info, inbuf, read)) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("could not map the input frame"), (nullptr));
    return GST_FLOW_ERROR;
  }
  if (!gst_video_frame_map(&out, &p.out_info, outbuf, write)) {
    gst_video_frame_unmap(&in);
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("could not map the output frame"), (nullptr));
    return GST_FLOW_ERROR;
  }
  // Both frames at their own strides: the chain reads and writes them in place.
  spgst::InputFrame input;
  input.layout = p.layout;
  if (p.layout == spgst::Layout::yuv) {
    input.yuv = p.yuv;
    input.yuv.width = GST_VIDEO_FRAME_WIDTH(&in);
    input.yuv.height = GST_VIDEO_FRAME_HEIGHT(&in);
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&in) && i < 3; ++i) {
      input.yuv.planes[i] = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&in, i));
      input.yuv.pitches[i] = size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&in, i));
    }
  } else {
    input.packed = {static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&in, 0)), GST_VIDEO_FRAME_WIDTH(&in),
                    GST_VIDEO_FRAME_HEIGHT(&in), size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&in, 0))};
  }
  const stylepipe::Image output{static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&out, 0)),
                                GST_VIDEO_FRAME_WIDTH(&out), GST_VIDEO_FRAME_HEIGHT(&out),
                                size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&out, 0))};
  GstFlowReturn ret = GST_FLOW_OK;
  try {
    if (in_place) {
      engine->run_device(input, output, cuda->stream(), stream_seconds(trans, inbuf));
      cuda->finish();
    } else {
      engine->run_host(input, output, stream_seconds(trans, inbuf));
    }
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("stylepipe: %s", e.what()), (nullptr));
    ret = GST_FLOW_ERROR;
  }
  gst_video_frame_unmap(&out);
  gst_video_frame_unmap(&in);
  return ret;
}

static gboolean gst_stylepipe_sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstStylepipe* self = GST_STYLEPIPE(trans);
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_STOP:
    case GST_EVENT_SEGMENT:
      // Serialized with the frames: the streaming thread is here, not in transform().
      if (std::shared_ptr<spgst::Engine> engine = engine_of(self)) {
        try {
          engine->reset();
          GST_DEBUG_OBJECT(self, "%s: temporal stages start again", GST_EVENT_TYPE_NAME(event));
        } catch (const std::exception& e) {
          GST_WARNING_OBJECT(self, "reset: %s", e.what());
        }
      }
      break;
    default:
      break;
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

static gboolean gst_stylepipe_query(GstBaseTransform* trans, GstPadDirection direction, GstQuery* query) {
  if (GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT) {
    std::shared_ptr<spgst::CudaMemory> cuda = cuda_of(GST_STYLEPIPE(trans));
    if (cuda && cuda->answer_context_query(query)) return TRUE;
  }
  if (direction == GST_PAD_SRC && GST_QUERY_TYPE(query) == GST_QUERY_LATENCY) {
    // Upstream's latency, plus ours: 0. The transform is synchronous (each
    // frame is finished and pushed before the next is taken), so no frame is
    // held in flight; the chain's time per frame is processing time, not latency.
    if (!gst_pad_peer_query(GST_BASE_TRANSFORM_SINK_PAD(trans), query)) return FALSE;
    gboolean live = FALSE;
    GstClockTime min = 0, max = GST_CLOCK_TIME_NONE;
    gst_query_parse_latency(query, &live, &min, &max);
    constexpr GstClockTime kHeldFrames = 0;
    gst_query_set_latency(query, live, min + kHeldFrames, max);
    GST_DEBUG_OBJECT(trans, "latency: live %d, min %" GST_TIME_FORMAT " max %" GST_TIME_FORMAT " (0 frames held)",
                     live, GST_TIME_ARGS(min), GST_TIME_ARGS(max));
    return TRUE;
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->query(trans, direction, query);
}

// PAUSED -> READY: what this run did, in the log (GST_DEBUG=stylepipe:4).
static gboolean gst_stylepipe_stop(GstBaseTransform* trans) {
  GstStructure* stats = stats_of(GST_STYLEPIPE(trans));
  GST_INFO_OBJECT(trans, "stats: %" GST_PTR_FORMAT, stats);
  gst_structure_free(stats);
  return TRUE;
}

static gboolean gst_stylepipe_start(GstBaseTransform* trans) {
  // READY -> PAUSED: a new run starts with a first frame.
  if (std::shared_ptr<spgst::Engine> engine = engine_of(GST_STYLEPIPE(trans))) {
    try {
      engine->reset();
    } catch (const std::exception& e) {
      GST_ELEMENT_ERROR(trans, LIBRARY, FAILED, ("stylepipe: %s", e.what()), (nullptr));
      return FALSE;
    }
  }
  return TRUE;
}

// A context handed in by the application or the bin. The chain's own CUDA
// context stays (its memory is the only one the chain can address); before
// READY, a CUDA context's device is the one cuda-device-id=-1 takes.
static void gst_stylepipe_set_context(GstElement* element, GstContext* context) {
  GstStylepipe* self = GST_STYLEPIPE(element);
  if (std::shared_ptr<spgst::CudaMemory> cuda = cuda_of(self)) {
    cuda->note_context(context);
  } else if (g_strcmp0(gst_context_get_context_type(context), "gst.cuda.context") == 0) {
    guint device = 0;
    if (gst_structure_get_uint(gst_context_get_structure(context), "cuda-device-id", &device)) {
      GST_OBJECT_LOCK(self);
      self->priv->neighbours_device = int(device);
      GST_OBJECT_UNLOCK(self);
    }
  }
  GST_ELEMENT_CLASS(parent_class)->set_context(element, context);
}

static GstStateChangeReturn gst_stylepipe_change_state(GstElement* element, GstStateChange transition) {
  GstStylepipe* self = GST_STYLEPIPE(element);
  if (transition == GST_STATE_CHANGE_NULL_TO_READY && !open_engine(self)) return GST_STATE_CHANGE_FAILURE;
  const GstStateChangeReturn ret = GST_ELEMENT_CLASS(parent_class)->change_state(element, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL ||
      (transition == GST_STATE_CHANGE_NULL_TO_READY && ret == GST_STATE_CHANGE_FAILURE))
    close_engine(self);
  return ret;
}

static void gst_stylepipe_set_property(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
  GstStylepipe* self = GST_STYLEPIPE(object);
  Private& p = *self->priv;
  if (id != PROP_STATS && GST_STATE(self) != GST_STATE_NULL) {
    // The chain is made at NULL -> READY from these; a change later would not be seen.
    GST_WARNING_OBJECT(self, "`%s` is read when the element goes to READY: set it in the NULL state",
                       g_param_spec_get_name(pspec));
  }
  GST_OBJECT_LOCK(self);
  switch (id) {
    case PROP_CONFIG: {
      const char* s = g_value_get_string(value);
      p.config_path = s ? s : "";
      break;
    }
    case PROP_PIPELINE: {
      const char* s = g_value_get_string(value);
      p.pipeline_text = s ? s : "";
      break;
    }
    case PROP_BACKEND:
      p.backend = spgst::BackendChoice(g_value_get_enum(value));
      break;
    case PROP_CUDA_DEVICE_ID:
      p.cuda_device_id = g_value_get_int(value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_stylepipe_get_property(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
  GstStylepipe* self = GST_STYLEPIPE(object);
  Private& p = *self->priv;
  if (id == PROP_STATS) {
    g_value_take_boxed(value, stats_of(self));
    return;
  }
  GST_OBJECT_LOCK(self);
  switch (id) {
    case PROP_CONFIG:
      g_value_set_string(value, p.config_path.empty() ? nullptr : p.config_path.c_str());
      break;
    case PROP_PIPELINE:
      g_value_set_string(value, p.pipeline_text.empty() ? nullptr : p.pipeline_text.c_str());
      break;
    case PROP_BACKEND:
      g_value_set_enum(value, int(p.backend));
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int(value, p.cuda_device_id);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_stylepipe_finalize(GObject* object) {
  GstStylepipe* self = GST_STYLEPIPE(object);
  delete self->priv;
  self->priv = nullptr;
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_stylepipe_init(GstStylepipe* self) {
  self->priv = new Private();
  gst_video_info_init(&self->priv->in_info);
  gst_video_info_init(&self->priv->out_info);
  // Late frames are dropped before the chain sees them (live pipelines).
  gst_base_transform_set_qos_enabled(GST_BASE_TRANSFORM(self), TRUE);
  // The time each frame spends in the element, for the stats (LatencySamples).
  gst_pad_add_probe(GST_BASE_TRANSFORM_SINK_PAD(self), GST_PAD_PROBE_TYPE_BUFFER,
                    [](GstPad*, GstPadProbeInfo*, gpointer element) {
                      GST_STYLEPIPE(element)->priv->latency.arrived();
                      return GST_PAD_PROBE_OK;
                    },
                    self, nullptr);
  gst_pad_add_probe(GST_BASE_TRANSFORM_SRC_PAD(self), GST_PAD_PROBE_TYPE_BUFFER,
                    [](GstPad*, GstPadProbeInfo* info, gpointer element) {
                      const int64_t us = GST_STYLEPIPE(element)->priv->latency.left();
                      GST_LOG_OBJECT(element, "latency: %" G_GINT64_FORMAT " us, pts %" GST_TIME_FORMAT, us,
                                     GST_TIME_ARGS(GST_BUFFER_PTS(GST_PAD_PROBE_INFO_BUFFER(info))));
                      return GST_PAD_PROBE_OK;
                    },
                    self, nullptr);
}

static void gst_stylepipe_class_init(GstStylepipeClass* klass) {
  GObjectClass* object_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* trans_class = GST_BASE_TRANSFORM_CLASS(klass);

  object_class->set_property = gst_stylepipe_set_property;
  object_class->get_property = gst_stylepipe_get_property;
  object_class->finalize = gst_stylepipe_finalize;

  const auto flags = GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_property(
      object_class, PROP_CONFIG,
      g_param_spec_string("config", "Config file",
                          "A stylepipe config (YAML file) whose `pipeline:` list is run on every frame; "
                          "read when the element goes to READY, where its errors fail the state change with "
                          "file:line:col. Give this or `pipeline`",
                          nullptr, flags));
  g_object_class_install_property(
      object_class, PROP_PIPELINE,
      g_param_spec_string("pipeline", "Inline config",
                          "A stylepipe config as YAML text, e.g. \"pipeline: [{xbr: {scale: 2}}]\"; errors name it "
                          "<pipeline property>:line:col. Give this or `config`",
                          nullptr, flags));
  g_object_class_install_property(
      object_class, PROP_BACKEND,
      g_param_spec_enum("backend", "Backend",
                        "Where the chain runs: auto (CUDA where a device is available, else the CPU with a "
                        "warning), cuda (an error where it is not available) or cpu",
                        GST_TYPE_STYLEPIPE_BACKEND, int(spgst::BackendChoice::automatic), flags));
  g_object_class_install_property(
      object_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int("cuda-device-id", "CUDA device",
                       "The CUDA device the chain runs on (as this process numbers them); -1: the device of a "
                       "CUDA context the neighbours handed in before READY, else device 0",
                       -1, G_MAXINT, kDefaultDeviceId, flags));
  g_object_class_install_property(
      object_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "What the element has done: device, stages, memory (CUDAMemory or system), "
                         "cuda-context, frames, device-frames (run in place in CUDA memory), resets (flushes, new "
                         "segments), converted-frames (BGRx turned into RGBA, a host copy each), yuv-frames (NV12 or "
                         "I420 frames, converted by the chain where they are), uploads and downloads (frames "
                         "staged through pinned memory to the GPU and back), pinned-frames (of those, both "
                         "buffers in the element's pinned memory: copied by DMA, not by the CPU), staged-cuda-frames (CUDA memory of "
                         "another context, staged through host memory), latency-frames, latency-p50-us, "
                         "latency-p99-us and latency-max-us (microseconds from a frame's arrival on the sink pad "
                         "to its push on the src pad, over the last 16384 frames since READY)",
                         GST_TYPE_STRUCTURE, GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

  gst_element_class_set_static_metadata(
      element_class, "stylepipe", "Filter/Effect/Video",
      "Runs a stylepipe chain (pencil, xbr, halftone, ...) on every frame, on CUDA or the CPU",
      "the stylepipe authors");
  gst_element_class_add_pad_template(
      element_class, pad_template("sink", GST_PAD_SINK, STYLEPIPE_CUDA_SINK_CAPS, STYLEPIPE_SYSTEM_SINK_CAPS));
  gst_element_class_add_pad_template(
      element_class, pad_template("src", GST_PAD_SRC, STYLEPIPE_CUDA_SRC_CAPS, STYLEPIPE_SYSTEM_SRC_CAPS));
  element_class->change_state = gst_stylepipe_change_state;
  element_class->set_context = gst_stylepipe_set_context;

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps = gst_stylepipe_transform_caps;
  trans_class->fixate_caps = gst_stylepipe_fixate_caps;
  trans_class->set_caps = gst_stylepipe_set_caps;
  trans_class->get_unit_size = gst_stylepipe_get_unit_size;
  trans_class->propose_allocation = gst_stylepipe_propose_allocation;
  trans_class->decide_allocation = gst_stylepipe_decide_allocation;
  trans_class->transform = gst_stylepipe_transform;
  trans_class->sink_event = gst_stylepipe_sink_event;
  trans_class->query = gst_stylepipe_query;
  trans_class->start = gst_stylepipe_start;
  trans_class->stop = gst_stylepipe_stop;

  gst_type_mark_as_plugin_api(GST_TYPE_STYLEPIPE_BACKEND, GstPluginAPIFlags(0));
}
