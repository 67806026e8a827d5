// The CUDA memory path (CUDA builds with gstreamer-cuda-1.0): see cuda_memory.h.
// Only the headers that need no OpenGL are included beyond the loader's
// (cudaGL.h; cmake/gstreamer.cmake gives it a stand-in <GL/gl.h> where the
// system has none, as on the GPU machines).
#include <cuda.h>
#include <cuda_runtime.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>

#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "gstreamer/cuda_memory.h"
#include "stylepipe/errors.h"

GST_DEBUG_CATEGORY_EXTERN(gst_stylepipe_debug);
#define GST_CAT_DEFAULT gst_stylepipe_debug

namespace spgst {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw stylepipe::DeviceError(stylepipe::ExitCode::unavailable, "stylepipe element, CUDA memory: " + what);
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(status));
}

// A driver API function through the runtime (no link to libcuda).
template <class Function>
Function driver_function(const char* symbol) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t status = cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t status = cudaGetDriverEntryPoint(symbol, &function, cudaEnableDefault, &found);
#endif
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || !function)
    fail(std::string("the driver has no ") + symbol);
  return reinterpret_cast<Function>(function);
}

// The primary context of `device` (the one every stylepipe session runs on),
// retained once for the life of the process: GstCudaContexts that wrap it may
// outlive the element in its neighbours' pools.
std::pair<CUcontext, CUdevice> primary_context(int device) {
  static std::mutex mutex;
  static std::map<int, std::pair<CUcontext, CUdevice>> retained;
  std::lock_guard lock(mutex);
  if (auto found = retained.find(device); found != retained.end()) return found->second;
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaFree(nullptr), "the runtime's context");
  auto device_get = driver_function<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
  auto retain = driver_function<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain");
  CUdevice handle = 0;
  CUcontext context = nullptr;
  if (device_get(&handle, device) != CUDA_SUCCESS) fail("cuDeviceGet(" + std::to_string(device) + ")");
  if (retain(&context, handle) != CUDA_SUCCESS) fail("cuDevicePrimaryCtxRetain");
  return retained[device] = {context, handle};
}

void fill_context(GstContext* context, GstCudaContext* cuda, int device) {
  GstStructure* s = gst_context_writable_structure(context);
  gst_structure_set(s, GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, cuda, "cuda-device-id", G_TYPE_UINT,
                    guint(device), nullptr);
}

}  // namespace

bool cuda_memory_built() { return true; }

struct CudaMemory::Impl {
  GstElement* element = nullptr;
  int device = 0;
  CUcontext handle = nullptr;
  GstCudaContext* context = nullptr;
  cudaStream_t stream = nullptr;

  GstBufferPool* new_pool(GstCaps* caps, guint* size, guint min, guint max) const {
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps)) return nullptr;
    GstBufferPool* pool = gst_cuda_buffer_pool_new(context);
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_config_set_params(config, caps, guint(GST_VIDEO_INFO_SIZE(&info)), min, max);
    if (!gst_buffer_pool_set_config(pool, config)) {
      GST_WARNING_OBJECT(element, "the CUDA buffer pool refuses %" GST_PTR_FORMAT, caps);
      gst_object_unref(pool);
      return nullptr;
    }
    // Pitched rows: the pool says how large its buffers are.
    config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_get_params(config, nullptr, size, nullptr, nullptr);
    gst_structure_free(config);
    return pool;
  }
};

CudaMemory::CudaMemory(GstElement* element, int device) : impl_(std::make_unique<Impl>()) {
  impl_->element = element;
  impl_->device = device;
  if (!gst_cuda_load_library()) fail("libgstcuda-1.0 could not load the CUDA driver (libcuda.so.1)");
  gst_cuda_memory_init_once();
  const auto [handle, cu_device] = primary_context(device);
  impl_->handle = handle;
  impl_->context = gst_cuda_context_new_wrapped(handle, cu_device);
  if (!impl_->context) fail("gst_cuda_context_new_wrapped");
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
}

CudaMemory::~CudaMemory() {
  if (impl_->stream) {
    cudaSetDevice(impl_->device);
    cudaStreamSynchronize(impl_->stream);
    cudaStreamDestroy(impl_->stream);
  }
  if (impl_->context) gst_object_unref(impl_->context);
}

void CudaMemory::post_context() {
  GstContext* context = gst_context_new(GST_CUDA_CONTEXT_TYPE, TRUE);
  fill_context(context, impl_->context, impl_->device);
  gst_element_post_message(impl_->element, gst_message_new_have_context(GST_OBJECT(impl_->element), context));
}

bool CudaMemory::answer_context_query(GstQuery* query) {
  const gchar* type = nullptr;
  if (!gst_query_parse_context_type(query, &type) || g_strcmp0(type, GST_CUDA_CONTEXT_TYPE) != 0) return false;
  GstContext* old = nullptr;
  gst_query_parse_context(query, &old);
  GstContext* context = old ? gst_context_copy(old) : gst_context_new(GST_CUDA_CONTEXT_TYPE, TRUE);
  fill_context(context, impl_->context, impl_->device);
  gst_query_set_context(query, context);
  gst_context_unref(context);
  GST_DEBUG_OBJECT(impl_->element, "answered a CUDA context query with %s", describe().c_str());
  return true;
}

void CudaMemory::note_context(GstContext* context) {
  if (!context || g_strcmp0(gst_context_get_context_type(context), GST_CUDA_CONTEXT_TYPE) != 0) return;
  GstCudaContext* other = nullptr;
  if (!gst_structure_get(gst_context_get_structure(context), GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &other,
                         nullptr))
    return;
  if (gst_cuda_context_get_handle(other) != impl_->handle)
    GST_INFO_OBJECT(impl_->element,
                    "a CUDA context other than the chain's (%p) was handed in: not adopted (the chain runs on "
                    "the primary context); frames of it are staged through host memory",
                    gst_cuda_context_get_handle(other));
  gst_object_unref(other);
}

bool CudaMemory::propose_pool(GstQuery* query, GstCaps* caps) {
  if (gst_query_get_n_allocation_pools(query) == 0) {
    guint size = 0;
    GstBufferPool* pool = impl_->new_pool(caps, &size, 0, 0);
    if (!pool) return false;
    gst_query_add_allocation_pool(query, pool, size, 0, 0);
    gst_object_unref(pool);
    GST_DEBUG_OBJECT(impl_->element, "proposed a CUDA buffer pool of %s for %" GST_PTR_FORMAT, describe().c_str(), caps);
  }
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
  return true;
}

bool CudaMemory::decide_pool(GstQuery* query, GstCaps* caps) {
  GstBufferPool* pool = nullptr;
  guint size = 0, min = 0, max = 0;
  const bool have_pool = gst_query_get_n_allocation_pools(query) > 0;
  if (have_pool) gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
  // Downstream's pool only where it is CUDA memory of the chain's context.
  if (pool && (!GST_IS_CUDA_BUFFER_POOL(pool) ||
               gst_cuda_context_get_handle(GST_CUDA_BUFFER_POOL(pool)->context) != impl_->handle)) {
    GST_DEBUG_OBJECT(impl_->element, "downstream's pool %" GST_PTR_FORMAT " is not of the chain's context", pool);
    gst_clear_object(&pool);
  }
  if (pool) {
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    GstVideoInfo info;
    gst_video_info_from_caps(&info, caps);
    gst_buffer_pool_config_set_params(config, caps, MAX(size, guint(GST_VIDEO_INFO_SIZE(&info))), min, max);
    if (!gst_buffer_pool_set_config(pool, config)) gst_clear_object(&pool);
  }
  GST_DEBUG_OBJECT(impl_->element, "output pool: %s", pool ? "downstream's, of the chain's context" : "its own");
  if (!pool) pool = impl_->new_pool(caps, &size, min, max);
  if (!pool) return false;
  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_get_params(config, nullptr, &size, nullptr, nullptr);
  gst_structure_free(config);
  if (have_pool)
    gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool(query, pool, size, min, max);
  gst_object_unref(pool);
  return true;
}

bool CudaMemory::is_ours(GstBuffer* buffer) const {
  const guint n = gst_buffer_n_memory(buffer);
  for (guint i = 0; i < n; ++i) {
    GstMemory* memory = gst_buffer_peek_memory(buffer, i);
    if (!gst_is_cuda_memory(memory) ||
        gst_cuda_context_get_handle(GST_CUDA_MEMORY_CAST(memory)->context) != impl_->handle)
      return false;
  }
  return n > 0;
}

void CudaMemory::wait_for_writers(GstBuffer* buffer) const {
#if GST_CHECK_VERSION(1, 24, 0)
  // GstCudaStream (1.24): the writer's stream may still be at work on it.
  for (guint i = 0; i < gst_buffer_n_memory(buffer); ++i) {
    GstMemory* memory = gst_buffer_peek_memory(buffer, i);
    if (gst_is_cuda_memory(memory)) gst_cuda_memory_sync(GST_CUDA_MEMORY_CAST(memory));
  }
#else
  (void)buffer;  // 1.22: every CUDA element finishes its work before it pushes
#endif
}

GstMapFlags CudaMemory::device_map(GstMapFlags flags) { return GstMapFlags(flags | GST_MAP_CUDA); }

void* CudaMemory::stream() const { return impl_->stream; }

void CudaMemory::finish() { check(cudaStreamSynchronize(impl_->stream), "the chain's work on CUDA memory"); }

std::string CudaMemory::describe() const {
  std::ostringstream text;
  text << "GstCudaContext of cuda:" << impl_->device << " (its primary context " << impl_->handle << ")";
  return text.str();
}

}  // namespace spgst
