#!/usr/bin/env bash
# Installs what stylepipe needs to build and test on Debian 12 and 13 (CI proves both).
# The CUDA toolkit (NVIDIA's packages, /usr/local/cuda) is optional: it is not
# in the distribution's default repositories, and without it the build is the
# CPU-only configuration (same CLI, configs and CPU results; no CUDA backend).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libavfilter-dev libavdevice-dev
  ffmpeg libffmpeg-nvenc-dev
  libfontconfig-dev fonts-dejavu-core  # the labels of `stylepipe preview` (drawtext finds the font through fontconfig)
  libyaml-cpp-dev libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libfftw3-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev  # the GStreamer plugin (gstreamer/); bad: the CUDA memory headers (gstcuda)
  gstreamer1.0-tools gstreamer1.0-plugins-base  # tests only: gst-launch-1.0, videotestsrc and videoconvert for the plugin's tests
  gstreamer1.0-libav gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly  # tests only: the README's GStreamer recipes (H.264 decoder, mp4mux, matroskamux, x264enc)
  mirrormagic-data  # real pixel-art tile sheets for the xbr oracle tests
  xvfb  # a virtual X server for the x11grab capture test
  libcgal-dev  # tests only: the lowpoly stage checks its Delaunay mesh against CGAL
  python3 python3-jsonschema python3-yaml  # tests only: configs checked against the JSON schema
  python3-dev python3-pybind11 python3-numpy  # the Python module (python/) and its tests
  python3-venv python3-pip  # tests only: `pip install .` into a venv
  slurmctld slurmd slurm-client munge  # tests only: a single-node Slurm cluster (scripts/slurm-local.sh)
  clang libclang-rt-dev  # checks only: libFuzzer and clang's sanitizer runtimes (scripts/fuzz.sh)
  llvm  # checks only: llvm-symbolizer, for the sanitizers' stack traces and LSan's suppressions (not pulled in by clang)
  help2man file  # the Debian package: its man page from --help; file for CPack's dpkg-shlibdeps step
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# An nvcc that runs, as CMake looks for one (a wrapper left on PATH may not).
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! nvcc --version >/dev/null 2>&1; then
  echo "install-deps: no CUDA toolkit (nvcc): the build will be CPU-only (NVIDIA's cuda-toolkit package adds the CUDA backend)"
fi
