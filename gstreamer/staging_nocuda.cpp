// A build without CUDA: no session runs on CUDA, so no frame is ever staged.
#include "gstreamer/engine.h"
#include "stylepipe/errors.h"

namespace spgst {

struct HostStaging::Impl {};

HostStaging::HostStaging(int) {
  throw stylepipe::DeviceError(stylepipe::ExitCode::unavailable, "this build of stylepipe has no CUDA backend");
}
HostStaging::~HostStaging() = default;
void HostStaging::run(stylepipe::Chain&, const stylepipe::Image&, const stylepipe::Image&,
                      const stylepipe::RunOptions&) {}

}  // namespace spgst

// A CPU-only build of the library declares StageChain::run_cuda but defines it
// nowhere: the public Chain::run references it on its (unreachable) CUDA
// branch. Python's lazy binding never notices; GStreamer loads plugins with
// RTLD_NOW, which refuses an undefined symbol. cmake/gstreamer.cmake points
// that symbol here (--defsym) in builds without CUDA; a CPU session never
// calls it. (The library's fix: a run_cuda in pipeline/stage_chain_nocuda.cpp.)
extern "C" void spgst_no_cuda_run() {
  throw stylepipe::DeviceError(stylepipe::ExitCode::unavailable, "this build of stylepipe has no CUDA backend");
}
