// A CPU-only build has no NVDEC (it decodes into CUDA memory): every stream is refused.
#include "codecs/nvdec_caps.h"
#include "pipeline/device.h"

namespace sp {

std::optional<std::string> nvdec_capability_refusal(const AVCodecParameters*, AVBufferRef*) {
  return std::string(kNoCudaInBuild);
}

}  // namespace sp
