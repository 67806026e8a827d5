// stylepipe.VideoReader, VideoWriter and their frames, exported by DLPack
// (versioned and legacy) and the array interfaces without a copy.
#include "python/video.h"

#include <pybind11/stl.h>

#include <type_traits>

#include "python/array_import.h"
#include "python/dlpack_abi.h"
#include "stylepipe/streams.h"
#include "stylepipe/video.h"

namespace py = pybind11;

namespace stylepipe::python {
namespace {

// What a capsule hands over: the tensor, its shape and strides, and a
// reference that keeps the frame's pooled buffer from reuse.
template <class Managed>
struct Export {
  Managed managed{};
  int64_t shape[3] = {0, 0, 4};
  int64_t strides[3] = {0, 4, 1};
  std::shared_ptr<VideoFrame> frame;
};

template <class Managed>
void fill(Export<Managed>& e, const std::shared_ptr<VideoFrame>& frame, const Device& device) {
  e.frame = frame;
  e.shape[0] = frame->image.height;
  e.shape[1] = frame->image.width;
  e.strides[0] = int64_t(frame->image.pitch);
  dlpack::Tensor& t = e.managed.dl_tensor;
  t.data = frame->image.data;
  t.device = {device.backend == Backend::cuda ? dlpack::kCUDA : dlpack::kCPU, device.backend == Backend::cuda ? device.index : 0};
  t.ndim = 3;
  t.dtype = {dlpack::kUInt, 8, 1};
  t.shape = e.shape;
  t.strides = e.strides;
  t.byte_offset = 0;
  e.managed.manager_ctx = &e;
  e.managed.deleter = [](Managed* self) { delete static_cast<Export<Managed>*>(self->manager_ctx); };
}

// A capsule nobody consumed still owns its tensor.
template <class Managed>
void capsule_destructor(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed: renamed "used_..."
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed && managed->deleter) managed->deleter(managed);
}

template <class Managed>
py::object capsule_of(const std::shared_ptr<VideoFrame>& frame, const Device& device, const char* name) {
  auto* e = new Export<Managed>();
  fill(*e, frame, device);
  if constexpr (std::is_same_v<Managed, dlpack::ManagedTensorVersioned>) {
    e->managed.version = {1, 0};
    e->managed.flags = 0;
  }
  // The destructor is told its name by the capsule's type: a capture-less function.
  PyCapsule_Destructor destructor = [](PyObject* c) {
    capsule_destructor<Managed>(c, std::is_same_v<Managed, dlpack::ManagedTensor> ? "dltensor" : "dltensor_versioned");
  };
  PyObject* capsule = PyCapsule_New(&e->managed, name, destructor);
  if (!capsule) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

uintptr_t stream_of(const VideoFrame& f) { return reinterpret_cast<uintptr_t>(f.cuda_stream); }

}  // namespace

PyFrame::PyFrame(std::shared_ptr<VideoFrame> frame, Device device) : frame_(std::move(frame)), device_(device) {}

py::tuple PyFrame::shape() const { return py::make_tuple(frame_->image.height, frame_->image.width, 4); }

py::tuple PyFrame::dlpack_device() const {
  if (device_.backend == Backend::cuda) return py::make_tuple(int(dlpack::kCUDA), device_.index);
  return py::make_tuple(int(dlpack::kCPU), 0);
}

py::object PyFrame::dlpack(py::object stream, py::object max_version, py::object dl_device, py::object copy) {
  if (!copy.is_none() && copy.cast<bool>()) throw py::buffer_error("stylepipe frames are exported without copies (copy=True)");
  if (!dl_device.is_none() && !dl_device.cast<py::tuple>().equal(dlpack_device()))
    throw py::buffer_error("a stylepipe frame is exported on its own device only");
  if (device_.backend == Backend::cuda) {
    // The consumer's stream waits for the frame's conversion (DLPack: -1 none, 1 legacy default, 2 per-thread).
    const int64_t consumer = stream.is_none() ? 1 : stream.cast<int64_t>();
    if (consumer == 0) throw py::value_error("__dlpack__ stream 0 is ambiguous for CUDA: pass 1 (legacy default), 2 or a handle");
    if (consumer != -1) {
      py::gil_scoped_release unlocked;
      order_streams(reinterpret_cast<void*>(consumer == 1 ? 0 : consumer), frame_->cuda_stream, device_.index);
    }
  } else if (!stream.is_none()) {
    throw py::value_error("__dlpack__ stream must be None for a CPU frame");
  }
  const bool versioned = !max_version.is_none() && max_version.cast<py::tuple>()[0].cast<int>() >= 1;
  if (versioned) return capsule_of<dlpack::ManagedTensorVersioned>(frame_, device_, "dltensor_versioned");
  return capsule_of<dlpack::ManagedTensor>(frame_, device_, "dltensor");
}

py::dict PyFrame::array_interface(bool cuda) const {
  if (cuda != (device_.backend == Backend::cuda))
    throw py::attribute_error(cuda ? "a CPU frame has no __cuda_array_interface__" : "a CUDA frame has no __array_interface__");
  py::dict d;
  d["shape"] = shape();
  d["typestr"] = "|u1";
  d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(frame_->image.data), false);
  d["strides"] = py::make_tuple(int64_t(frame_->image.pitch), 4, 1);
  d["version"] = 3;
  if (cuda) d["stream"] = stream_of(*frame_) == 0 ? uintptr_t(1) : stream_of(*frame_);
  return d;
}

void bind_video(py::module_& m) {
  py::class_<PyFrame>(m, "Frame", "A decoded RGBA frame (HxWx4 uint8); export it with DLPack or the array interfaces.")
      .def_property_readonly("shape", &PyFrame::shape)
      .def_property_readonly("index", [](const PyFrame& f) { return f.frame().index; })
      .def_property_readonly("time", [](const PyFrame& f) { return f.frame().time_seconds; }, "seconds from the input's start")
      .def_property_readonly("duration", [](const PyFrame& f) { return f.frame().duration_seconds; })
      .def_property_readonly("device", [](const PyFrame& f) { return f.device().to_string(); })
      .def_property_readonly("stream", [](const PyFrame& f) { return stream_of(f.frame()); },
                             "the CUDA stream its conversion was queued on (0: the legacy default)")
      .def("__dlpack__", &PyFrame::dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", &PyFrame::dlpack_device)
      .def_property_readonly("__array_interface__", [](const PyFrame& f) { return f.array_interface(false); })
      .def_property_readonly("__cuda_array_interface__", [](const PyFrame& f) { return f.array_interface(true); });

  py::class_<VideoReader>(m, "_VideoReader")
      .def(py::init([](const std::string& path, const std::string& device, const std::string& hwdec) {
             return std::make_unique<VideoReader>(path, Session::open(Device::parse(device)), hwdec);
           }),
           py::arg("path"), py::arg("device"), py::arg("hwdec"))
      .def_property_readonly("width", [](const VideoReader& r) { return r.info().width; })
      .def_property_readonly("height", [](const VideoReader& r) { return r.info().height; })
      .def_property_readonly("frame_rate", [](const VideoReader& r) { return r.info().frame_rate; })
      .def_property_readonly("duration", [](const VideoReader& r) { return r.info().duration_seconds; })
      .def_property_readonly("frame_count", [](const VideoReader& r) { return r.info().frame_count_estimate; })
      .def_property_readonly("codec", [](const VideoReader& r) { return r.info().codec; })
      .def_property_readonly("hardware_decoding", &VideoReader::hardware_decoding)
      .def("next", [](VideoReader& r, uintptr_t stream, const std::string& device) -> py::object {
        std::shared_ptr<VideoFrame> frame;
        {
          py::gil_scoped_release unlocked;
          frame = r.next(reinterpret_cast<void*>(stream));
        }
        if (!frame) return py::none();
        return py::cast(PyFrame(std::move(frame), Device::parse(device)));
      });

  py::class_<VideoWriter>(m, "_VideoWriter")
      .def(py::init([](const std::string& path, py::object like, int width, int height, double rate,
                       const std::string& device, py::dict o) {
             VideoWriterOptions options;
             if (o.contains("codec") && !o["codec"].is_none()) options.codec = o["codec"].cast<std::string>();
             if (o.contains("format") && !o["format"].is_none()) options.format = o["format"].cast<std::string>();
             if (o.contains("preset") && !o["preset"].is_none()) options.preset = o["preset"].cast<std::string>();
             if (o.contains("pixel_format") && !o["pixel_format"].is_none()) options.pixel_format = o["pixel_format"].cast<std::string>();
             if (o.contains("crf") && !o["crf"].is_none()) options.crf = o["crf"].cast<int>();
             if (o.contains("overwrite") && !o["overwrite"].is_none()) options.overwrite = o["overwrite"].cast<bool>();
             auto session = Session::open(Device::parse(device));
             if (!like.is_none()) return std::make_unique<VideoWriter>(path, like.cast<const VideoReader&>(), session, options);
             return std::make_unique<VideoWriter>(path, width, height, rate, session, options);
           }),
           py::arg("path"), py::arg("like"), py::arg("width"), py::arg("height"), py::arg("rate"), py::arg("device"),
           py::arg("options"))
      .def("write", [](VideoWriter& w, py::handle array, double time, uintptr_t stream, const std::string& device) {
        ImportedArray in = import_array(array, "the frame", Device::parse(device), stream, false);
        py::gil_scoped_release unlocked;
        w.write(in.image, time, reinterpret_cast<void*>(stream));
      })
      .def("close", [](VideoWriter& w) {
        py::gil_scoped_release unlocked;
        w.close();
      });
}

}  // namespace stylepipe::python
