#include "python/array_import.h"

#include <pybind11/stl.h>

#include <optional>

#include "python/dlpack_abi.h"
#include "stylepipe/streams.h"

namespace py = pybind11;

namespace stylepipe::python {
namespace {

std::string device_text(int32_t type, int32_t id) {
  if (type == dlpack::kCPU || type == dlpack::kCUDAHost) return "cpu";
  if (type == dlpack::kCUDA || type == dlpack::kCUDAManaged) return "cuda:" + std::to_string(id);
  return "DLPack device type " + std::to_string(type);
}

// Where an array of DLPack device (type, id) can be used: nullopt if nowhere.
std::optional<Device> device_of(int32_t type, int32_t id) {
  if (type == dlpack::kCPU || type == dlpack::kCUDAHost) return Device::cpu();
  if (type == dlpack::kCUDA || type == dlpack::kCUDAManaged) return Device::cuda(id);
  return std::nullopt;
}

void check_device(const char* what, int32_t type, int32_t id, const Device& chain_device) {
  const std::optional<Device> device = device_of(type, id);
  if (!device || !(*device == chain_device))
    throw py::value_error(std::string(what) + " is on " + device_text(type, id) + ", but the chain runs on " +
                          chain_device.to_string() + " (stylepipe copies nothing implicitly)");
}

std::string dtype_text(uint8_t code, uint8_t bits, uint16_t lanes) {
  static const char* names[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string name = code < 7 ? names[code] : "dtype code " + std::to_string(code);
  if (code != 6) name += std::to_string(bits);
  if (lanes != 1) name += "x" + std::to_string(lanes);
  return name;
}

[[noreturn]] void wrong_dtype(const char* what, const std::string& got) {
  throw py::type_error(std::string(what) + " must be uint8 RGBA (an HxWx4 array of uint8), got " + got +
                       " (convert it explicitly; stylepipe copies nothing implicitly)");
}

// Shape and byte strides of an HxWx4 uint8 array -> the image, or why not.
Image image_of(const char* what, void* data, int ndim, const int64_t* shape, const std::optional<std::vector<int64_t>>& byte_strides) {
  auto shape_text = [&] {
    std::string s = "(";
    for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (ndim == 1 ? ",)" : ")");
  };
  if (ndim != 3 || shape[2] != 4)
    throw py::value_error(std::string(what) + " must be HxWx4 (RGBA), got shape " + shape_text());
  if (shape[0] <= 0 || shape[1] <= 0 || shape[0] > INT32_MAX || shape[1] > INT32_MAX)
    throw py::value_error(std::string(what) + " has no pixels: shape " + shape_text());
  int64_t pitch = shape[1] * 4;
  if (byte_strides) {
    const std::vector<int64_t>& s = *byte_strides;
    if (s[2] != 1 || s[1] != 4 || s[0] < shape[1] * 4)
      throw py::value_error(std::string(what) + " must have 4-byte pixels side by side in rows at a pitch "
                            "(strides (pitch >= 4*W, 4, 1) in bytes), got strides (" + std::to_string(s[0]) + ", " +
                            std::to_string(s[1]) + ", " + std::to_string(s[2]) +
                            "); make it contiguous explicitly (stylepipe copies nothing implicitly)");
    pitch = s[0];
  }
  return Image{static_cast<uint8_t*>(data), int(shape[1]), int(shape[0]), size_t(pitch)};
}

template <class Managed>
ImportedArray from_dlpack_tensor(Managed* managed, const char* what, const Device& chain_device, bool read_only) {
  ImportedArray out;
  // From here on the tensor is ours to give back, whatever goes wrong.
  out.release = [managed] {
    if (managed->deleter) managed->deleter(managed);
  };
  const dlpack::Tensor& t = managed->dl_tensor;
  if (t.dtype.code != dlpack::kUInt || t.dtype.bits != 8 || t.dtype.lanes != 1)
    wrong_dtype(what, dtype_text(t.dtype.code, t.dtype.bits, t.dtype.lanes));
  check_device(what, t.device.device_type, t.device.device_id, chain_device);
  if (read_only) throw py::value_error(std::string(what) + " is read-only");
  std::optional<std::vector<int64_t>> strides;
  if (t.strides && t.ndim == 3) strides = std::vector<int64_t>{t.strides[0], t.strides[1], t.strides[2]};
  out.image = image_of(what, static_cast<uint8_t*>(t.data) + t.byte_offset, t.ndim, t.shape, strides);
  out.device = chain_device;
  return out;
}

ImportedArray import_dlpack(py::handle array, const char* what, const Device& chain_device, uintptr_t stream,
                            bool writable) {
  // Where the array lives decides the stream argument: CPU producers take None.
  const auto where = array.attr("__dlpack_device__")().cast<std::pair<int32_t, int32_t>>();
  check_device(what, where.first, where.second, chain_device);
  py::object stream_arg = py::none();
  // DLPack numbers the legacy default stream 1 (0 is ambiguous and not allowed).
  if (chain_device.backend == Backend::cuda) stream_arg = py::int_(stream == 0 ? uintptr_t(1) : stream);
  py::object capsule;
  try {
    capsule = array.attr("__dlpack__")(py::arg("stream") = stream_arg, py::arg("max_version") = py::make_tuple(1, 0));
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = array.attr("__dlpack__")(py::arg("stream") = stream_arg);  // a producer before DLPack 1.0
  }
  PyObject* raw = capsule.ptr();
  if (PyCapsule_IsValid(raw, "dltensor_versioned")) {
    auto* managed = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(raw, "dltensor_versioned"));
    PyCapsule_SetName(raw, "used_dltensor_versioned");
    if (managed->version.major > 1) {
      if (managed->deleter) managed->deleter(managed);
      throw py::value_error(std::string(what) + ": DLPack " + std::to_string(managed->version.major) +
                            ".x is newer than the 1.x stylepipe reads");
    }
    return from_dlpack_tensor(managed, what, chain_device, writable && (managed->flags & dlpack::kFlagReadOnly));
  }
  if (PyCapsule_IsValid(raw, "dltensor")) {
    auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(raw, "dltensor"));
    PyCapsule_SetName(raw, "used_dltensor");
    return from_dlpack_tensor(managed, what, chain_device, false);
  }
  throw py::type_error(std::string(what) + ": __dlpack__ gave no DLPack capsule");
}

ImportedArray import_cuda_array_interface(py::handle array, const char* what, const Device& chain_device,
                                          uintptr_t stream, bool writable) {
  const py::dict cai = array.attr("__cuda_array_interface__");
  const std::string typestr = cai["typestr"].cast<std::string>();
  if (typestr != "|u1" && typestr != "<u1" && typestr != ">u1") wrong_dtype(what, "typestr '" + typestr + "'");
  const auto data = cai["data"].cast<std::pair<uintptr_t, bool>>();
  if (writable && data.second) throw py::value_error(std::string(what) + " is read-only");
  const auto shape = cai["shape"].cast<std::vector<int64_t>>();
  std::optional<std::vector<int64_t>> strides;
  if (cai.contains("strides") && !cai["strides"].is_none()) strides = cai["strides"].cast<std::vector<int64_t>>();
  if (strides && strides->size() != shape.size()) throw py::value_error(std::string(what) + ": strides and shape differ in length");
  if (chain_device.backend != Backend::cuda)
    throw py::value_error(std::string(what) + " is CUDA memory (__cuda_array_interface__), but the chain runs on " +
                          chain_device.to_string() + " (stylepipe copies nothing implicitly)");
  ImportedArray out;
  out.image = image_of(what, reinterpret_cast<void*>(data.first), int(shape.size()), shape.data(), strides);
  out.device = chain_device;
  // v3: the producer's pending work is on `stream` (1: legacy default, 2: per-thread default).
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    const uintptr_t producer = cai["stream"].cast<uintptr_t>();
    if (producer == 0) throw py::value_error(std::string(what) + ": __cuda_array_interface__ stream 0 is not allowed");
    order_streams(reinterpret_cast<void*>(stream), reinterpret_cast<void*>(producer == 1 ? 0 : producer),
                  chain_device.index);
  }
  return out;
}

ImportedArray import_buffer(py::handle array, const char* what, const Device& chain_device, bool writable) {
  auto view = std::make_unique<Py_buffer>();
  const int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(array.ptr(), view.get(), flags) != 0) throw py::error_already_set();
  ImportedArray out;
  Py_buffer* held = view.release();
  out.release = [held] {
    PyBuffer_Release(held);
    delete held;
  };
  const std::string format = held->format ? held->format : "B";
  if (held->itemsize != 1 || (format != "B" && format != "=B" && format != "<B" && format != ">B" && format != "@B"))
    wrong_dtype(what, "buffer format '" + format + "'");
  if (chain_device.backend != Backend::cpu)
    throw py::value_error(std::string(what) + " is host memory, but the chain runs on " + chain_device.to_string() +
                          " (stylepipe copies nothing implicitly)");
  std::vector<int64_t> shape(held->shape, held->shape + held->ndim);
  std::optional<std::vector<int64_t>> strides;
  if (held->strides) strides = std::vector<int64_t>(held->strides, held->strides + held->ndim);
  out.image = image_of(what, held->buf, held->ndim, shape.data(), strides);
  out.device = chain_device;
  return out;
}

}  // namespace

ImportedArray import_array(py::handle array, const char* what, const Device& chain_device, uintptr_t stream,
                           bool writable) {
  if (py::hasattr(array, "__dlpack__") && py::hasattr(array, "__dlpack_device__")) {
    try {
      return import_dlpack(array, what, chain_device, stream, writable);
    } catch (const py::error_already_set& e) {
      // NumPy < 2 cannot export a read-only array by DLPack; its buffer can.
      if (!e.matches(PyExc_BufferError) || !PyObject_CheckBuffer(array.ptr())) throw;
    }
    return import_buffer(array, what, chain_device, writable);
  }
  if (py::hasattr(array, "__cuda_array_interface__"))
    return import_cuda_array_interface(array, what, chain_device, stream, writable);
  if (PyObject_CheckBuffer(array.ptr())) return import_buffer(array, what, chain_device, writable);
  throw py::type_error(std::string(what) + " must be an array: an object with __dlpack__, __cuda_array_interface__ "
                       "or the buffer protocol (NumPy, PyTorch, CuPy), got " +
                       py::type::handle_of(array).attr("__name__").cast<std::string>());
}

}  // namespace stylepipe::python
