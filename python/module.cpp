// The `stylepipe._stylepipe` extension: a thin layer over the public C++ API
// (include/stylepipe/). The Python package (python/stylepipe/__init__.py)
// adds what is easier in Python: error classes with two bases, output arrays
// of the input's kind, and the caller's current stream.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "python/array_import.h"
#include "python/video.h"
#include "stylepipe/chain.h"
#include "stylepipe/errors.h"
#include "stylepipe/session.h"
#include "stylepipe/tools.h"
#include "stylepipe/transcode.h"

namespace py = pybind11;
using namespace stylepipe;

namespace {

// The package's classes (ConfigError(Error, ValueError), ...), set once at import.
struct ErrorClasses {
  py::handle base, config, media, device;
} g_errors;

void raise_public(const Error& e) {
  py::handle cls = dynamic_cast<const ConfigError*>(&e)   ? g_errors.config
                   : dynamic_cast<const MediaError*>(&e)  ? g_errors.media
                   : dynamic_cast<const DeviceError*>(&e) ? g_errors.device
                                                          : g_errors.base;
  if (!cls) cls = PyExc_RuntimeError;
  py::object error = py::reinterpret_borrow<py::object>(cls)(e.what());
  error.attr("exit_code") = int(e.code());
  if (const auto* c = dynamic_cast<const ConfigError*>(&e)) {
    error.attr("file") = c->file();
    error.attr("line") = c->line();
    error.attr("column") = c->column();
    error.attr("field") = c->field();
  }
  PyErr_SetObject(cls.ptr(), error.ptr());
}

class PyChain {
 public:
  PyChain(Chain chain, std::string path) : chain_(std::move(chain)), path_(std::move(path)) {}

  static PyChain from_file(const std::string& path, const std::string& device) {
    auto session = Session::open(Device::parse(device));
    return PyChain(Chain::from_file(path, session), path);
  }
  static PyChain from_yaml(const std::string& text, const std::string& device, const std::string& name) {
    auto session = Session::open(Device::parse(device));
    return PyChain(Chain::from_yaml(text, session, name), "");
  }

  std::string device() const { return chain_.session().device().to_string(); }
  const std::string& path() const { return path_; }

  py::tuple output_shape(const py::tuple& shape) {
    if (shape.size() != 3 || shape[2].cast<int>() != 4)
      throw py::value_error("output_shape takes an HxWx4 shape, got " + std::string(py::repr(shape)));
    const Size out = chain_.output_size({shape[1].cast<int>(), shape[0].cast<int>()});
    return py::make_tuple(out.height, out.width, 4);
  }

  // Both arrays come in as they are (no copies); the work is queued on
  // `stream` with the GIL released, and not waited for.
  void run(py::handle input, py::handle output, uintptr_t stream, std::optional<double> time_seconds) {
    const Device& device = chain_.session().device();
    python::ImportedArray in = python::import_array(input, "the input", device, stream, false);
    python::ImportedArray out = python::import_array(output, "out", device, stream, true);
    RunOptions options;
    options.cuda_stream = reinterpret_cast<void*>(stream);
    options.time_seconds = time_seconds;
    py::gil_scoped_release unlocked;
    chain_.run(in.image, out.image, options);
  }

  void reset() {
    py::gil_scoped_release unlocked;
    chain_.reset();
  }
  bool temporal() const { return chain_.temporal(); }
  int threads() const { return chain_.cpu_threads(); }
  void set_threads(int threads) {
    if (threads < 0) throw py::value_error("threads is " + std::to_string(threads) + ": give 0 (the shared pool) or more");
    chain_.set_cpu_threads(threads);
  }
  std::vector<std::string> stages() const { return chain_.stage_names(); }

 private:
  Chain chain_;
  std::string path_;
};

template <class T>
void take(py::dict& fields, const char* name, T& into) {
  if (!fields.contains(name)) return;
  py::object value = fields[name];
  if (!value.is_none()) into = value.cast<T>();
  PyDict_DelItemString(fields.ptr(), name);
}

// stylepipe.transcode: the C++ run on a thread of its own; this thread waits
// with the GIL released, reports progress and turns Ctrl-C into a clean stop.
int transcode_from_python(py::dict fields, py::object progress) {
  TranscodeRequest r;
  take(fields, "config", r.config_path);
  take(fields, "input", r.input);
  take(fields, "inputs", r.inputs);
  take(fields, "fail_fast", r.fail_fast);
  take(fields, "output", r.output);
  take(fields, "input_format", r.input_format);
  take(fields, "input_pixel_format", r.input_pixel_format);
  take(fields, "input_size", r.input_size);
  take(fields, "input_rate", r.input_rate);
  take(fields, "format", r.output_format);
  take(fields, "codec", r.codec);
  take(fields, "preset", r.preset);
  take(fields, "pixel_format", r.pixel_format);
  take(fields, "crf", r.crf);
  take(fields, "backend", r.backend);
  take(fields, "hwdec", r.hwdec);
  take(fields, "encoder", r.encoder);
  take(fields, "overwrite", r.overwrite);
  take(fields, "frames", r.frames);
  take(fields, "start", r.start);
  take(fields, "duration", r.duration);
  take(fields, "stats_json", r.stats_json);
  take(fields, "frames_in_flight", r.frames_in_flight);
  take(fields, "queue_depth", r.queue_depth);
  take(fields, "threads", r.threads);
  take(fields, "jobs", r.jobs);
  take(fields, "devices", r.devices);
  take(fields, "segments", r.segments);
  take(fields, "segment_seconds", r.segment_seconds);
  take(fields, "workdir", r.workdir);
  take(fields, "worker_processes", r.worker_processes);
  if (!fields.empty())
    throw py::type_error("transcode() got unexpected keyword argument(s): " + std::string(py::repr(py::list(fields.attr("keys")()))));
  r.progress = "none";  // a library call prints nothing of its own
  std::atomic<bool> cancel{false};
  std::atomic<int64_t> frames{0};
  std::atomic<double> media_seconds{0};
  r.cancel = &cancel;
  if (!progress.is_none())
    r.on_progress = [&](const TranscodeProgress& p) {
      frames = p.frames;
      media_seconds = p.media_seconds;
    };
  // The run's thread takes the caller's GPU (torch.cuda.set_device(1) and the like): a new thread's is the first.
  std::future<int> run = std::async(std::launch::async, [&r, device = current_cuda_device()] {
    use_cuda_device(device);
    return transcode(r);
  });
  int64_t reported = -1;
  while (true) {
    bool done = false;
    {
      py::gil_scoped_release unlocked;
      done = run.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready;
    }
    if (PyErr_CheckSignals() != 0) {
      cancel = true;
      py::gil_scoped_release unlocked;
      run.wait();  // finishes the output with what was written
      break;
    }
    if (!progress.is_none() && frames.load() != reported) {
      reported = frames.load();
      try {
        progress(py::dict(py::arg("frames") = reported, py::arg("media_seconds") = media_seconds.load()));
      } catch (...) {  // the callback's own error stops the run, and is what the caller sees
        cancel = true;
        py::gil_scoped_release unlocked;
        run.wait();
        throw;
      }
    }
    if (done) break;
  }
  const int code = run.get();  // rethrows the run's error
  if (PyErr_Occurred()) throw py::error_already_set();  // the KeyboardInterrupt
  return code;
}

}  // namespace

PYBIND11_MODULE(_stylepipe, m) {
  m.doc() = "stylepipe's C++ library; use the `stylepipe` package";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_public(e);
    }
  });
  m.def("_set_error_classes", [](py::object base, py::object config, py::object media, py::object device) {
    g_errors = {base.release(), config.release(), media.release(), device.release()};  // kept for the process
  });

  py::class_<PyChain>(m, "_Chain")
      .def_static("from_file", &PyChain::from_file, py::arg("path"), py::arg("device"))
      .def_static("from_yaml", &PyChain::from_yaml, py::arg("text"), py::arg("device"), py::arg("name"))
      .def_property_readonly("device", &PyChain::device)
      .def_property_readonly("path", &PyChain::path)
      .def_property_readonly("temporal", &PyChain::temporal)
      .def_property_readonly("stages", &PyChain::stages)
      .def_property("threads", &PyChain::threads, &PyChain::set_threads)
      .def("output_shape", &PyChain::output_shape, py::arg("shape"))
      .def("run", &PyChain::run, py::arg("input"), py::arg("out"), py::arg("stream"), py::arg("time_seconds"))
      .def("reset", &PyChain::reset);

  stylepipe::python::bind_video(m);
  m.def("_transcode", &transcode_from_python, py::arg("fields"), py::arg("progress"));
  m.def("validate_config", &validate_config, py::arg("path"),
        "Checks a config; raises ConfigError with every problem, returns the number of stages.");
  m.def("stages_reference", &stages_reference, py::arg("format") = "text",
        "Every stage and its parameters: 'text', 'json' or 'markdown'.");
  m.def("build_backends", &build_backends);
  m.def("cuda_device_count", &cuda_device_count);
  m.attr("__version__") = kVersion;
}
