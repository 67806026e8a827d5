#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/stage_chain_events.h"

namespace sp {

void create_order_events(std::vector<cudaEvent_t>&) {
  throw Error(ExitCode::unavailable, std::string("stage lanes: ") + kNoCudaInBuild);
}

// None were made.
void destroy_order_events(const std::vector<cudaEvent_t>&) noexcept {}

}  // namespace sp
