"""stylepipe: GPU video stylization (pencil drawing, xBR, halftoning, low-poly).

A ``Chain`` runs a configured chain of stages on RGBA images: HxWx4 uint8
arrays from NumPy (CPU), or PyTorch and CuPy (CUDA), taken through DLPack,
``__cuda_array_interface__`` or the buffer protocol without a copy. On CUDA
the work is queued on the caller's current stream, and nothing waits for it.

    import numpy as np, stylepipe
    chain = stylepipe.Chain([("pencil", {"color": True})], device="cpu")
    sketch = chain(image)            # a new array of the input's kind
    chain(image, out=image)          # in place

``transcode`` is the whole video pipeline (``stylepipe run``).
"""
import json
import os

from . import _stylepipe
from ._stylepipe import Frame, __version__, build_backends, cuda_device_count, stages_reference


class Error(Exception):
    """Every stylepipe error. ``exit_code`` is the CLI's code for it."""

    exit_code = 70


class ConfigError(Error, ValueError):
    """A config that does not validate: ``file``, ``line``, ``column``, ``field`` name the first problem."""

    file = ""
    line = 0
    column = 0
    field = ""


class MediaError(Error, OSError):
    """A file that cannot be read, decoded, encoded or written."""


class DeviceError(Error, RuntimeError):
    """The device cannot do what was asked (no GPU, a build without CUDA)."""


_stylepipe._set_error_classes(Error, ConfigError, MediaError, DeviceError)


def validate_config(path):
    """Checks a config file; raises ConfigError with every problem. Returns the number of stages."""
    return _stylepipe.validate_config(os.fspath(path))


def _device_text(device):
    if device is None:
        return "cpu"
    text = str(device)
    return "cuda:0" if text == "cuda" else text


def _kind(array):
    module = type(array).__module__.split(".")[0]
    if module in ("torch", "cupy", "numpy"):
        return module
    return None


def _current_stream(array, device):
    """The caller's current stream on ``device`` as an integer handle (0: the legacy default)."""
    kind = _kind(array)
    if isinstance(array, Frame):
        return array.stream
    if kind == "torch":
        import torch
        return torch.cuda.current_stream(array.device).cuda_stream
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return cupy.cuda.get_current_stream().ptr
    return 0


def _stream_handle(stream):
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    for name in ("cuda_stream", "ptr"):
        if hasattr(stream, name):
            return int(getattr(stream, name))
    raise TypeError("stream must be an integer handle or an object with .cuda_stream or .ptr, got %s"
                    % type(stream).__name__)


def _empty_like(array, shape):
    kind = _kind(array)
    if isinstance(array, Frame):  # a frame of ours: an array of the library at hand
        if array.device == "cpu":
            kind = "numpy"
        else:
            try:
                import torch
                return torch.empty(shape, dtype=torch.uint8, device=array.device)
            except ImportError:
                kind = "cupy"
                array = None
    if kind == "numpy":
        import numpy
        return numpy.empty(shape, dtype=numpy.uint8)
    if kind == "torch":
        import torch
        return torch.empty(shape, dtype=torch.uint8, device=array.device)
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(array.device.id if array is not None else 0):
            return cupy.empty(shape, dtype=cupy.uint8)
    raise TypeError("chain(img) makes its output as a NumPy, PyTorch or CuPy array; for a %s, pass out="
                    % type(array).__name__)


def _shape_of(array):
    if hasattr(array, "shape"):
        return tuple(int(n) for n in array.shape)
    if hasattr(array, "__cuda_array_interface__"):
        return tuple(array.__cuda_array_interface__["shape"])
    try:
        return tuple(memoryview(array).shape)
    except TypeError:
        raise TypeError("the input must be an array: an object with __dlpack__, __cuda_array_interface__ or the "
                        "buffer protocol (NumPy, PyTorch, CuPy), got %s" % type(array).__name__) from None


class Chain:
    """A chain of stages on one device ("cpu", "cuda", "cuda:N").

    ``Chain([("pencil", {"color": True}), ("xbr", {"scale": 2})], device="cuda:0")``;
    ``Chain.from_yaml(path)``; ``Chain.from_dict({"pipeline": [...]})``.
    Temporal stages keep their state between calls, in call order.
    On the CPU, ``threads=0`` shares the process's pool (a thread a core) with
    every such chain; ``threads=N`` gives the chain N threads of its own (1:
    the calling thread), so that chains called from several Python threads
    run side by side.
    """

    def __init__(self, stages=None, device="cpu", *, threads=0, _native=None):
        if _native is None:
            if stages is None:
                raise TypeError("Chain needs a list of (stage, parameters) pairs")
            pipeline = []
            for entry in stages:
                if isinstance(entry, str):
                    name, params = entry, {}
                else:
                    name, params = entry
                pipeline.append({name: dict(params or {})})
            _native = self._from_text({"pipeline": pipeline}, device, "<stages>")
        self._native = _native
        if threads:
            self._native.threads = threads

    @staticmethod
    def _from_text(config, device, name):
        # JSON is YAML. One stage a line, so that a problem's line number is its stage's place in the list.
        if isinstance(config, dict) and isinstance(config.get("pipeline"), list):
            lines = ["pipeline:"] + ["  - " + json.dumps(stage) for stage in config["pipeline"]]
            lines += [json.dumps(k) + ": " + json.dumps(v) for k, v in config.items() if k != "pipeline"]
            text = "\n".join(lines) + "\n"
        else:
            text = json.dumps(config) + "\n"
        return _stylepipe._Chain.from_yaml(text, _device_text(device), name)

    @classmethod
    def from_yaml(cls, path, device="cpu", *, threads=0):
        """A chain from a YAML config file; errors name its line and column."""
        return cls(_native=_stylepipe._Chain.from_file(os.fspath(path), _device_text(device)), threads=threads)

    @classmethod
    def from_dict(cls, config, device="cpu", *, threads=0):
        """A chain from a config as a dict: ``{"pipeline": [{"pencil": {"color": True}}]}``."""
        return cls(_native=cls._from_text(config, device, "<dict>"), threads=threads)

    @property
    def device(self):
        return self._native.device

    @property
    def threads(self):
        """CPU threads of the chain's own; 0: the process's shared pool. Setting it restarts temporal stages."""
        return self._native.threads

    @threads.setter
    def threads(self, threads):
        self._native.threads = threads

    @property
    def stages(self):
        return self._native.stages

    @property
    def temporal(self):
        """Whether a stage keeps state from frame to frame."""
        return self._native.temporal

    def output_shape(self, shape):
        """The (H, W, 4) shape of the output for an input of ``shape``."""
        return self._native.output_shape(tuple(shape))

    def __call__(self, img, out=None, *, stream=None, time=None):
        """Runs the chain on ``img`` into ``out`` (a new array of the input's kind when None).

        On CUDA the work goes on ``stream`` (an integer handle or an object with
        ``.cuda_stream`` or ``.ptr``), by default the caller's current stream of
        PyTorch or CuPy; nothing waits for it. ``out`` may be ``img`` itself.
        """
        if out is None:
            out = _empty_like(img, self.output_shape(_shape_of(img)))
        handle = _stream_handle(stream)
        if handle is None:
            handle = _current_stream(img, int(self.device.split(":")[1])) if self.device != "cpu" else 0
        self._native.run(img, out, handle, time)
        return out

    def reset(self):
        """Forgets temporal state: the next frame is a first frame."""
        self._native.reset()

    def __repr__(self):
        return "stylepipe.Chain(%r, device=%r)" % (self.stages, self.device)


def _caller_stream(device):
    """The current stream of the caller's framework on a CUDA ``device`` ("cuda:N"): PyTorch's, else CuPy's."""
    index = int(device.split(":")[1])
    try:
        import torch
        if torch.cuda.is_initialized():
            return torch.cuda.current_stream(index).cuda_stream
    except ImportError:
        pass
    try:
        import cupy
        with cupy.cuda.Device(index):
            return cupy.cuda.get_current_stream().ptr
    except ImportError:
        return 0


class VideoReader:
    """Decodes a video into RGBA frames on ``device``: NVDEC straight into GPU memory on CUDA.

    ``for frame in VideoReader("in.mp4", device="cuda:0")``: each ``Frame`` is HxWx4 uint8,
    exported without a copy (``torch.from_dlpack(frame)``, ``cupy.from_dlpack``, ``np.asarray``),
    with ``frame.time`` in seconds. A frame's buffer is not reused while it, or an export of it, lives.
    On CUDA the conversion is queued on the caller's current stream (or ``stream=``).
    """

    def __init__(self, path, device="cpu", hwdec="auto", stream=None):
        self.device = _device_text(device)
        self._native = _stylepipe._VideoReader(os.fspath(path), self.device, hwdec)
        self._stream = _stream_handle(stream)

    width = property(lambda self: self._native.width)
    height = property(lambda self: self._native.height)
    frame_rate = property(lambda self: self._native.frame_rate)
    duration = property(lambda self: self._native.duration)
    codec = property(lambda self: self._native.codec)
    hardware_decoding = property(lambda self: self._native.hardware_decoding)

    def __iter__(self):
        return self

    def __next__(self):
        stream = self._stream
        if stream is None:
            stream = _caller_stream(self.device) if self.device != "cpu" else 0
        frame = self._native.next(stream, self.device)
        if frame is None:
            raise StopIteration
        return frame


class VideoWriter:
    """Encodes RGBA frames (HxWx4 uint8 arrays on the writer's device, or Frames).

    ``VideoWriter(path, like=reader)`` takes the reader's size, rate and colour tags;
    ``VideoWriter(path, width=, height=, frame_rate=)`` sets them. Options: ``codec``,
    ``crf``, ``preset``, ``pixel_format``, ``format``, ``overwrite``. Use it as a context
    manager, or call ``close()``: the file is written under a temporary name until then.
    """

    def __init__(self, path, like=None, *, width=0, height=0, frame_rate=0.0, device=None, **options):
        if device is None:
            device = like.device if like is not None else "cpu"
        self.device = _device_text(device)
        self.frame_rate = like.frame_rate if like is not None else frame_rate
        self._frames = 0
        self._native = _stylepipe._VideoWriter(os.fspath(path), like._native if like is not None else None,
                                               width, height, float(frame_rate), self.device, options)

    def write(self, frame, time=None, stream=None):
        """Encodes ``frame``, shown at ``time`` seconds (default: a Frame's own, else the next frame's slot)."""
        if time is None:
            time = frame.time if isinstance(frame, Frame) else self._frames / self.frame_rate
        handle = _stream_handle(stream)
        if handle is None:
            handle = _current_stream(frame, int(self.device.split(":")[1])) if self.device != "cpu" else 0
        self._native.write(frame, float(time), handle, self.device)
        self._frames += 1

    def close(self):
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def transcode(input, output, config, *, jobs=0, progress=None, **options):
    """Transcodes ``input`` to ``output`` through ``config`` (a YAML path, or a Chain made from one).

    Keeps audio, timestamps and metadata; the options are ``stylepipe run``'s flags
    (``codec``, ``crf``, ``preset``, ``backend``, ``overwrite``, ``frames``, ...).
    ``progress(counts)`` is called with ``{"frames", "media_seconds"}`` as frames are written.
    Ctrl-C stops it cleanly (the output keeps what was written) and raises KeyboardInterrupt.
    Returns the exit code (0).

    A batch: ``input`` a list of paths (each may be a glob, ``"clips/*.mp4"``) and ``output``
    a pattern with ``{stem}``, ``{name}``, ``{ext}`` or ``{index}``; ``jobs`` clips run at a
    time, ``fail_fast=True`` starts no clip after a failed one. A failed clip is reported on
    stderr and the others go on; it returns 65 when some failed.
    ``jobs="auto"`` chooses the workers from the GPUs, the cores and the input's length, and
    of ``devices`` only the GPUs the chain keeps busy.
    """
    if jobs == "auto":
        jobs = -1  # TranscodeRequest::kJobsAuto
    if isinstance(config, Chain):
        if not config._native.path:
            raise TypeError("transcode takes a Chain made by Chain.from_yaml(path), or the path itself")
        options.setdefault("backend", "cpu" if config.device == "cpu" else "cuda")
        config = config._native.path
    if isinstance(input, (list, tuple)):
        options["inputs"] = [os.fspath(path) for path in input]
        input = ""
    fields = dict(options, input=os.fspath(input), output=os.fspath(output), config=os.fspath(config), jobs=jobs)
    return _stylepipe._transcode(fields, progress)


__all__ = ["Chain", "transcode", "VideoReader", "VideoWriter", "Frame", "validate_config", "stages_reference", "build_backends", "cuda_device_count",
           "Error", "ConfigError", "MediaError", "DeviceError", "__version__"]
