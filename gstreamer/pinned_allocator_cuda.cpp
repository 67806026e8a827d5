#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "gstreamer/pinned_allocator.h"

GST_DEBUG_CATEGORY_EXTERN(gst_stylepipe_debug);
#define GST_CAT_DEFAULT gst_stylepipe_debug

namespace {

constexpr const char* kPinnedMemoryType = "StylepipePinnedMemory";

struct PinnedMemory {
  GstMemory memory;
  uint8_t* data;  // the allocation's start; shared by sub-memories
};

struct StylepipePinnedAllocator {
  GstAllocator parent;
  int device;
};
struct StylepipePinnedAllocatorClass {
  GstAllocatorClass parent_class;
};

}  // namespace

G_DEFINE_TYPE(StylepipePinnedAllocator, stylepipe_pinned_allocator, GST_TYPE_ALLOCATOR)

namespace {

GstMemory* pinned_alloc(GstAllocator* allocator, gsize size, GstAllocationParams* params) {
  auto* self = reinterpret_cast<StylepipePinnedAllocator*>(allocator);
  const gsize align = params->align | gst_memory_alignment;
  const gsize maxsize = size + params->prefix + params->padding;
  void* data = nullptr;
  if (cudaSetDevice(self->device) != cudaSuccess || cudaMallocHost(&data, maxsize + align) != cudaSuccess) {
    GST_ERROR("cudaMallocHost of %" G_GSIZE_FORMAT " bytes: %s", maxsize, cudaGetErrorString(cudaGetLastError()));
    return nullptr;
  }
  // cudaMallocHost's blocks are page-aligned, beyond any alignment asked for.
  auto* memory = g_new0(PinnedMemory, 1);
  memory->data = static_cast<uint8_t*>(data);
  gst_memory_init(GST_MEMORY_CAST(memory), GstMemoryFlags(params->flags), allocator, nullptr, maxsize, align,
                  params->prefix, size);
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED)) memset(memory->data, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset(memory->data + params->prefix + size, 0, params->padding);
  return GST_MEMORY_CAST(memory);
}

void pinned_free(GstAllocator*, GstMemory* memory) {
  auto* pinned = reinterpret_cast<PinnedMemory*>(memory);
  if (!memory->parent) cudaFreeHost(pinned->data);
  g_free(pinned);
}

gpointer pinned_map(GstMemory* memory, gsize, GstMapFlags) { return reinterpret_cast<PinnedMemory*>(memory)->data; }
void pinned_unmap(GstMemory*) {}

GstMemory* pinned_share(GstMemory* memory, gssize offset, gssize size) {
  GstMemory* parent = memory->parent ? memory->parent : memory;
  if (size == -1) size = gssize(memory->size) - offset;
  auto* shared = g_new0(PinnedMemory, 1);
  shared->data = reinterpret_cast<PinnedMemory*>(memory)->data;
  gst_memory_init(GST_MEMORY_CAST(shared),
                  GstMemoryFlags(GST_MINI_OBJECT_FLAGS(parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY),
                  memory->allocator, parent, memory->maxsize, memory->align, memory->offset + gsize(offset), gsize(size));
  return GST_MEMORY_CAST(shared);
}

}  // namespace

static void stylepipe_pinned_allocator_class_init(StylepipePinnedAllocatorClass* klass) {
  GstAllocatorClass* allocator_class = GST_ALLOCATOR_CLASS(klass);
  allocator_class->alloc = pinned_alloc;
  allocator_class->free = pinned_free;
}

static void stylepipe_pinned_allocator_init(StylepipePinnedAllocator* self) {
  GstAllocator* allocator = GST_ALLOCATOR_CAST(self);
  allocator->mem_type = kPinnedMemoryType;
  allocator->mem_map = pinned_map;
  allocator->mem_unmap = pinned_unmap;
  allocator->mem_share = pinned_share;
  GST_OBJECT_FLAG_SET(allocator, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

namespace spgst {

GstAllocator* pinned_allocator_new(int device) {
  auto* allocator = static_cast<StylepipePinnedAllocator*>(g_object_new(stylepipe_pinned_allocator_get_type(), nullptr));
  gst_object_ref_sink(allocator);
  allocator->device = device;
  return GST_ALLOCATOR_CAST(allocator);
}

}  // namespace spgst
