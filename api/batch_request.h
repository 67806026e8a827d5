#pragma once
// `run` with several inputs or an output pattern (api/ only).
#include "stylepipe/transcode.h"

namespace stylepipe::detail {

// Several inputs, a glob, or an output pattern; a --manifest run never is.
bool is_batch(const TranscodeRequest& request);
// Expands the globs, checks the pattern, the config and every output before
// any work, then runs the clips (a glob of one file without a pattern is a
// single run).
int run_batch(const TranscodeRequest& request);

}  // namespace stylepipe::detail
