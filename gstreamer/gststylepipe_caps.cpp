// The `stylepipe` element's caps and allocation: which formats and memory
// each pad takes, the size the chain gives, and the buffer pools (see
// gststylepipe.cpp for the element as a whole).
#include <gst/video/video.h>

#include "gstreamer/gststylepipe_private.h"
#include "gstreamer/pinned_allocator.h"

#define GST_CAT_DEFAULT gst_stylepipe_debug

namespace spgst::element {
namespace {

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

GstCaps* transform_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps,
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

GstCaps* fixate_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps,
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

gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* outcaps) {
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

gboolean get_unit_size(GstBaseTransform*, GstCaps* caps, gsize* size) {
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps)) return FALSE;
  *size = GST_VIDEO_INFO_SIZE(&info);
  return TRUE;
}

// Upstream may give padded rows (GstVideoMeta): a video pool where it has none.
gboolean propose_allocation(GstBaseTransform* trans, GstQuery* decide_query, GstQuery* query) {
  if (!base_transform_class()->propose_allocation(trans, decide_query, query)) return FALSE;
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
gboolean decide_allocation(GstBaseTransform* trans, GstQuery* query) {
  GstCaps* outcaps = nullptr;
  gst_query_parse_allocation(query, &outcaps, nullptr);
  GstVideoInfo info;
  if (outcaps == nullptr || !gst_video_info_from_caps(&info, outcaps)) return FALSE;
  if (has_cuda_feature(outcaps)) {
    std::shared_ptr<spgst::CudaMemory> cuda = cuda_of(GST_STYLEPIPE(trans));
    if (!cuda || !cuda->decide_pool(query, outcaps)) return FALSE;
    return base_transform_class()->decide_allocation(trans, query);
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
  return base_transform_class()->decide_allocation(trans, query);
}

}  // namespace spgst::element
