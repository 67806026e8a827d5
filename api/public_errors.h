#pragma once
// The boundary between the library's internals, which throw sp::Error, and
// its callers, who see stylepipe::Error and its subclasses.
#include <exception>
#include <utility>

#include "stylepipe/errors.h"

namespace stylepipe::detail {

// Rethrows the exception being handled as its public class. Call it only
// inside a catch block.
[[noreturn]] void rethrow_as_public();

// Runs `work`, letting only public errors out.
template <class Work>
auto guarded(Work&& work) -> decltype(work()) {
  try {
    return std::forward<Work>(work)();
  } catch (...) {
    rethrow_as_public();
  }
}

}  // namespace stylepipe::detail
