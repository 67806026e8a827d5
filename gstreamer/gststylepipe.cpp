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

#include "gstreamer/gststylepipe_private.h"
#include "gstreamer/pinned_allocator.h"
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

using spgst::element::kDefaultDeviceId;
using spgst::element::Private;

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

}  // namespace

#define gst_stylepipe_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE(GstStylepipe, gst_stylepipe, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(gst_stylepipe_debug, "stylepipe", 0, "stylepipe video stylization"));
GST_ELEMENT_REGISTER_DEFINE(stylepipe, "stylepipe", GST_RANK_NONE, GST_TYPE_STYLEPIPE);

GstBaseTransformClass* spgst::element::base_transform_class() { return GST_BASE_TRANSFORM_CLASS(parent_class); }

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

using spgst::element::cuda_of;
using spgst::element::engine_of;
using spgst::element::has_cuda_feature;

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

}  // namespace

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
  trans_class->transform_caps = spgst::element::transform_caps;
  trans_class->fixate_caps = spgst::element::fixate_caps;
  trans_class->set_caps = spgst::element::set_caps;
  trans_class->get_unit_size = spgst::element::get_unit_size;
  trans_class->propose_allocation = spgst::element::propose_allocation;
  trans_class->decide_allocation = spgst::element::decide_allocation;
  trans_class->transform = gst_stylepipe_transform;
  trans_class->sink_event = gst_stylepipe_sink_event;
  trans_class->query = gst_stylepipe_query;
  trans_class->start = gst_stylepipe_start;
  trans_class->stop = gst_stylepipe_stop;

  gst_type_mark_as_plugin_api(GST_TYPE_STYLEPIPE_BACKEND, GstPluginAPIFlags(0));
}
