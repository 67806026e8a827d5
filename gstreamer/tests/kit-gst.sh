# Sourced by the GPU machine's GStreamer scripts (gpu_check.sh,
# second_gpu_check.sh, live_latency.sh), from the checkout's root: the kit's
# GStreamer tools with the plugin of build-gpu/ (a subshell each: the kit's
# GLib stays out of everything else), the element's stats line as its log
# gives it, and what the GPU checks share.
kit=/tmp/kit/gst-kit
kit_root=$PWD
gst() { (. "$kit/env.sh"; export GST_PLUGIN_PATH=$kit_root/build-gpu/gstreamer; "$@"); }
# The element's stats line (logged when it stops), and one of its counters.
stats_of() { grep -o "stats: stylepipe-stats.*" "$1" | tail -1; }
field() { sed -n "s/.*, $2=(guint64)\([0-9]*\).*/\1/p" <<<"$1"; }

# Configures build-gpu/ (sm_90, the kits, the plugin's CUDA memory path) and
# builds TARGETS; LOGDIR gets cmake.log and build.log. Needs scripts/devkit-env.sh sourced.
# Usage: build_plugin LOGDIR TARGETS...
build_plugin() {
  local logs=$1 generator=(-G Ninja)
  shift
  command -v ninja >/dev/null || generator=()
  # shellcheck disable=SC2154  # kit_cmake_args: set by scripts/devkit-env.sh
  PKG_CONFIG_PATH=$kit/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} cmake -S . -B build-gpu "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${kit_cmake_args[@]}" >"$logs/cmake.log" 2>&1 ||
    { tail -30 "$logs/cmake.log"; return 1; }
  cmake --build build-gpu -j "$(nproc)" --target "$@" >"$logs/build.log" 2>&1 ||
    { grep -E "error|Error" "$logs/build.log" | head -40; return 1; }
}
# A 45-frame 1080p H.264 clip tagged BT.709 limited range, as cameras and phones tag HD video.
make_hd_clip() {
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -frames:v 45 -c:v libx264 \
    -preset veryfast -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range tv "$1"
}
# NVDEC's NV12 in CUDA memory into the element and out through cudadownload,
# each on its own thread (queues), on GPU N: GStreamer 1.22 names the first
# GPU's decoder nvh264dec and GPU N's nvh264deviceNdec (its cuda-device-id is
# read-only). Usage: nvdec_pipeline CLIP CONFIG GPU [SINK...] (default fakesink)
nvdec_pipeline() {
  local input=$1 config=$2 gpu=$3 decoder=nvh264dec on_gpu=""
  shift 3
  [ "$gpu" = 0 ] || { decoder=nvh264device${gpu}dec; on_gpu=" cuda-device-id=$gpu"; }
  echo "filesrc location=$input ! qtdemux ! h264parse ! $decoder ! video/x-raw(memory:CUDAMemory),format=NV12 !" \
       "queue ! stylepipe config=$config backend=cuda$on_gpu ! queue ! cudadownload$on_gpu ! ${*:-fakesink}"
}
