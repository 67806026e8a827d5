#pragma once
// Files and folders removed on threads of their own: an unlink of a large
// file drops its pages and extents (0.65 s for a 2 GB output on an H100
// host), which a run need not wait for before it says it is done. The
// process's exit waits for them, so that nothing is left behind.
#include <string>

namespace sp {

// Removes `path` (a folder with what it holds): renamed at once to a hidden
// name beside it, removed from there on a thread. Errors are ignored, as for
// a temporary file that is already gone.
void remove_in_background(std::string path);
// Waits until every removal asked so far is done.
void wait_for_background_removals();

}  // namespace sp
