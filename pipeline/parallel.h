#pragma once
#include <functional>

namespace sp {

// Runs fn(begin, end) over [0, count) split into contiguous chunks on a
// process-wide pool of worker threads (one per hardware thread), and waits.
// The CPU backend of every stage uses this for its row loops.
void parallel_for(int count, const std::function<void(int begin, int end)>& fn, int min_chunk = 1);

// Number of worker threads (at least 1).
int worker_count();

}  // namespace sp
