// A build without the CUDA memory path (no CUDA, or no gstreamer-cuda-1.0):
// the element offers system memory only.
#include "gstreamer/cuda_memory.h"
#include "stylepipe/errors.h"

namespace spgst {

struct CudaMemory::Impl {};

bool cuda_memory_built() { return false; }

CudaMemory::CudaMemory(GstElement*, int) {
  throw stylepipe::DeviceError(stylepipe::ExitCode::unavailable,
                               "this build of the plugin has no CUDA memory support (CUDA and gstreamer-cuda-1.0)");
}
CudaMemory::~CudaMemory() = default;
void CudaMemory::post_context() {}
bool CudaMemory::answer_context_query(GstQuery*) { return false; }
void CudaMemory::note_context(GstContext*) {}
bool CudaMemory::propose_pool(GstQuery*, GstCaps*) { return false; }
bool CudaMemory::decide_pool(GstQuery*, GstCaps*) { return false; }
bool CudaMemory::is_ours(GstBuffer*) const { return false; }
void CudaMemory::wait_for_writers(GstBuffer*) const {}
GstMapFlags CudaMemory::device_map(GstMapFlags flags) { return flags; }
void* CudaMemory::stream() const { return nullptr; }
void CudaMemory::finish() {}
std::string CudaMemory::describe() const { return {}; }

}  // namespace spgst
