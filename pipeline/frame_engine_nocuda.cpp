#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/frame_engine.h"

namespace sp {

std::unique_ptr<FrameEngine> make_cuda_engine(std::vector<StageSpec>, BufferPool&, int, bool) {
  throw Error(ExitCode::unavailable, std::string("the CUDA engine: ") + kNoCudaInBuild);
}

}  // namespace sp
