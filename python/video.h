#pragma once
#include <pybind11/pybind11.h>

#include <memory>

#include "stylepipe/session.h"
#include "stylepipe/video.h"

namespace stylepipe::python {

// A decoded frame as Python sees it: its buffer stays the frame's while any
// export of it (a capsule, a tensor made from one) is alive.
class PyFrame {
 public:
  PyFrame(std::shared_ptr<VideoFrame> frame, Device device);
  const VideoFrame& frame() const { return *frame_; }
  const Device& device() const { return device_; }
  pybind11::tuple shape() const;
  pybind11::tuple dlpack_device() const;
  pybind11::object dlpack(pybind11::object stream, pybind11::object max_version, pybind11::object dl_device,
                          pybind11::object copy);
  pybind11::dict array_interface(bool cuda) const;

 private:
  std::shared_ptr<VideoFrame> frame_;
  Device device_;
};

void bind_video(pybind11::module_& m);

}  // namespace stylepipe::python
