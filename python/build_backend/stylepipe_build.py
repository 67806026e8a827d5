"""The PEP 517 build backend of `pip install .`: CMake builds the module, this packs the wheel.

It lives in the checkout (pyproject.toml's backend-path) and needs nothing from
PyPI, so `pip install .` works offline with Debian's packages alone. The
module is built in STYLEPIPE_BUILD_DIR (default: the checkout's `build`, the
README's build folder), configured there first if it is not yet; a build that
is already there is reused, so after the README's set-up it takes seconds.
"""
import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import zipfile

NAME = "stylepipe"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        for line in f:
            if line.startswith("project(stylepipe"):
                return line.split("VERSION")[1].split(")")[0].strip()
    raise RuntimeError("no project version in CMakeLists.txt")


def _tag():
    version = "cp%d%d" % sys.version_info[:2]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (version, version, platform)


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: GPU video stylization: pencil drawing, "
            "xBR, halftoning, low-poly\nRequires-Python: ==%d.%d.*\n" % ((NAME, _version()) + sys.version_info[:2]))


def _build_module():
    build = os.environ.get("STYLEPIPE_BUILD_DIR", os.path.join(ROOT, "build"))
    # pip's build isolation hides the system's site-packages (PYTHONPATH, PYTHONNOUSERSITE); CMake's
    # probe of the interpreter (NumPy, pybind11) must see them, as it does outside pip.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                        "-DSTYLEPIPE_PYTHON=" + sys.executable, "-DSTYLEPIPE_PYTHON_MODULE=ON"], check=True, env=env)
    subprocess.run(["cmake", "--build", build, "--target", "_stylepipe"], check=True, env=env)
    package = os.path.join(build, "python", NAME)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if not os.path.exists(os.path.join(package, "_stylepipe" + suffix)):
        raise RuntimeError("%s was built for another Python than %s (no _stylepipe%s in %s); set STYLEPIPE_BUILD_DIR "
                           "to a fresh folder" % (build, sys.executable, suffix, package))
    return package


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    package = _build_module()
    dist_info = "%s-%s.dist-info" % (NAME, _version())
    wheel_name = "%s-%s-%s.whl" % (NAME, _version(), _tag())
    record = ""
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as wheel:
        def add(name, data):
            nonlocal record
            wheel.writestr(name, data)
            record += _record_line(name, data)

        for file in sorted(os.listdir(package)):
            if os.path.isdir(os.path.join(package, file)):  # __pycache__, from tests that imported the build's package
                continue
            with open(os.path.join(package, file), "rb") as f:
                add("%s/%s" % (NAME, file), f.read())
        add(dist_info + "/METADATA", _metadata().encode())
        add(dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: stylepipe_build\nRoot-Is-Purelib: false\nTag: %s\n"
                                   % _tag()).encode())
        record += dist_info + "/RECORD,,\n"
        wheel.writestr(dist_info + "/RECORD", record)
    return wheel_name


def get_requires_for_build_wheel(config_settings=None):
    return []
