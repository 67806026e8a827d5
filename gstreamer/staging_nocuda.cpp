// A build without CUDA: no session runs on CUDA, so no frame is ever staged.
#include "gstreamer/engine.h"
#include "stylepipe/errors.h"

namespace spgst {

struct HostStaging::Impl {};

HostStaging::HostStaging(int) {
  throw stylepipe::DeviceError(stylepipe::ExitCode::unavailable, "this build of stylepipe has no CUDA backend");
}
HostStaging::~HostStaging() = default;
bool HostStaging::run(stylepipe::Chain&, const InputFrame&, const stylepipe::Image&, const stylepipe::RunOptions&) {
  return false;
}

}  // namespace spgst
