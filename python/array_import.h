#pragma once
// Arrays from Python, taken as they are: DLPack (versioned 1.0, then legacy),
// then __cuda_array_interface__ v3, then the buffer protocol. What is not
// HxWx4 uint8 with 4-byte pixels and rows at a pitch is refused with the
// reason (TypeError for the dtype, ValueError for shape, layout or device):
// nothing is ever converted or copied.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <string>

#include "stylepipe/chain.h"
#include "stylepipe/session.h"

namespace stylepipe::python {

struct ImportedArray {
  Image image;
  Device device;
  // Gives the producer's hold back (a DLPack deleter, a buffer view); runs at destruction.
  std::function<void()> release;
  ImportedArray() = default;
  ImportedArray(ImportedArray&& o) noexcept : image(o.image), device(o.device), release(std::move(o.release)) {
    o.release = nullptr;
  }
  ~ImportedArray() {
    if (release) release();
  }
};

// `what` names the array in messages ("the input"). `chain_device` is where
// the array must be; `stream` (a cudaStream_t as an integer, 0 the legacy
// default) is where the chain's work goes, and the producer's pending work is
// ordered before it. `writable`: the array is written (an output).
ImportedArray import_array(pybind11::handle array, const char* what, const Device& chain_device, uintptr_t stream,
                           bool writable);

}  // namespace stylepipe::python
