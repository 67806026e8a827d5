#!/usr/bin/env bash
# The GStreamer element on a GPU machine, with the device kit's GStreamer 1.22
# (.devkit/gst-kit.tar.xz beside the FFmpeg and headers kits):
#   1. builds the plugin with CUDA for sm_90 (build-gpu/, CUDA memory path on), shows its caps;
#   2. runs the plugin's CTest tests (CPU, label gstreamer);
#   3. CUDA memory (cudaupload ! stylepipe ! cudadownload) and system memory
#      staged through the GPU, each against `stylepipe run --backend cuda` on
#      the same raw frames, byte for byte, with the element's stats (device
#      frames, uploads, staged frames) and negotiated caps;
#   4. NVDEC: nvh264dec's NV12 in CUDA memory straight into the element, on a
#      1080p H.264 clip, against `stylepipe run --hwdec nvdec --backend cuda`
#      frame for frame, byte for byte; the caps and stats that show no host copy;
#   5. compute-sanitizer memcheck of the CUDA memory pipeline;
#   6. benchmarks: the NVDEC pipeline (pencil, 1080p) against `stylepipe run`
#      doing the same work; a live 60 fps 256x240 source through xbr 4x: the
#      element's latency (p50/p99/max, from its stats) and dropped frames.
# Usage: gstreamer/tests/gpu_check.sh OUTDIR   (from the checkout, .devkit carried)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=$(realpath -m "${1:?usage: gstreamer/tests/gpu_check.sh OUTDIR}")
mkdir -p "$out"
status=0
step() { echo; echo "=== $* ($(date +%T)) ==="; }
fail() { echo "FAIL: $*"; status=1; }

# shellcheck source=scripts/devkit-env.sh
. scripts/devkit-env.sh  # unpacks .devkit/*.tar.xz into /tmp/kit; kit_cmake_args
# shellcheck source=gstreamer/tests/kit-gst.sh
. gstreamer/tests/kit-gst.sh  # gst (the kit's tools with the build's plugin), stats_of, field
[ -f "$kit/env.sh" ] || { echo "no $kit/env.sh: copy ../shared/devkit/gst-kit.tar.xz into .devkit/"; exit 1; }

step "build (sm_90)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
build_plugin "$out" stylepipe gststylepipe test_gstreamer || exit 1
grep "GStreamer plugin" "$out/cmake.log"
gst gst-inspect-1.0 stylepipe >"$out/inspect.txt" 2>&1 || fail "gst-inspect-1.0 stylepipe"
sed -n '/Pad Templates/,/Element has/p' "$out/inspect.txt" | grep -E "template|video/x-raw|format"
grep -q "memory:CUDAMemory" "$out/inspect.txt" || fail "the plugin offers no CUDA memory (see cmake.log)"
for e in cudaupload cudadownload cudaconvert nvh264dec; do
  gst gst-inspect-1.0 "$e" >/dev/null 2>&1 && echo "kit element $e: yes" || echo "kit element $e: MISSING"
done

step "the plugin's tests (CPU)"
(cd build-gpu && gst ctest -L gstreamer --output-on-failure) >"$out/ctest.log" 2>&1 || fail "ctest -L gstreamer"
grep -E "tests passed|tests failed|\*\*\*Failed" "$out/ctest.log"

# The caps on the element's pads.
caps_of() { grep -E "GstStylepipe:stylepipe0.GstPad:(sink|src): caps" "$1" | sed 's/.*GstPad:/  /' | cut -c1-140; }

# `videotestsrc` frames, teed to a raw file, through the element (between
# `before` and `after`); the CLI stylizes the raw file on CUDA; the outputs
# must be equal byte for byte.
against_cli() {  # name config frames WxH pattern "before" "after" expected-memory [format: RGBA, NV12, I420]
  local name=$1 config=$2 frames=$3 size=$4 pattern=$5 before=$6 after=$7 memory=$8 format=${9:-RGBA}
  local w=${size%x*} h=${size#*x} d=$out/$name pix_fmt
  pix_fmt=$(case $format in RGBA) echo rgba ;; NV12) echo nv12 ;; I420) echo yuv420p ;; esac)
  mkdir -p "$d"
  # (YUV: no colorimetry in the caps, so both sides take an untagged video's: BT.601 up to 576 rows)
  # shellcheck disable=SC2086
  gst env GST_DEBUG=stylepipe:4 gst-launch-1.0 -v videotestsrc num-buffers="$frames" pattern="$pattern" \
    horizontal-speed=3 ! "video/x-raw,format=$format,width=$w,height=$h,framerate=30/1" ! tee name=t ! queue ! \
    filesink location="$d/in.raw" t. ! queue $before ! stylepipe config="$config" backend=cuda $after ! \
    filesink location="$d/gst.rgba" >"$d/gst.log" 2>&1 || { fail "$name: gst-launch-1.0"; tail -5 "$d/gst.log"; return; }
  if [ "$format" != RGBA ]; then
    python3 "$(dirname "$0")/pack_gst_raw.py" "$format" "$w" "$h" "$d/in.raw" "$d/in.packed" ||
      { fail "$name: pack_gst_raw.py"; return; }
    mv "$d/in.packed" "$d/in.raw"
  fi
  build-gpu/stylepipe run "$config" -f rawvideo --pix-fmt "$pix_fmt" --size "$size" --rate 30 -i "$d/in.raw" \
    --backend cuda --progress none --codec rawvideo -f rawvideo --pix-fmt rgba -o "$d/cli.rgba" --overwrite \
    >"$d/cli.log" 2>&1 || { fail "$name: stylepipe run"; tail -5 "$d/cli.log"; return; }
  local stats
  stats=$(stats_of "$d/gst.log")
  echo "$name: $stats"
  caps_of "$d/gst.log"
  grep -q "memory=(string)$memory" <<<"$stats" || fail "$name: memory is not $memory"
  [ "$(field "$stats" frames)" = "$frames" ] || fail "$name: $(field "$stats" frames) frames of $frames"
  if [ "$memory" = CUDAMemory ]; then
    [ "$(field "$stats" device-frames)" = "$frames" ] || fail "$name: not every frame in place"
    [ "$(field "$stats" uploads)" = 0 ] && [ "$(field "$stats" staged-cuda-frames)" = 0 ] || fail "$name: copies"
  else
    [ "$(field "$stats" uploads)" = "$frames" ] || fail "$name: $(field "$stats" uploads) frames staged of $frames"
  fi
  if cmp -s "$d/gst.rgba" "$d/cli.rgba"; then
    echo "ok: $name: $frames frames of $size equal stylepipe run --backend cuda"
  else
    fail "$name: differs from the CLI: $(cmp -l "$d/gst.rgba" "$d/cli.rgba" 2>/dev/null | wc -l) bytes of $(stat -c %s "$d/cli.rgba")"
  fi
  rm -f "$d"/*.rgba "$d"/*.raw
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n' >"$tmp/pencil.yaml"
printf 'pipeline:\n  - xbr: {scale: 2}\n' >"$tmp/xbr2.yaml"
cuda_in='! cudaupload ! video/x-raw(memory:CUDAMemory)'
cuda_out='! video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw,format=RGBA'

step "CUDA memory and staged system memory against the CLI (CUDA)"
against_cli cuda_pencil_1080p "$tmp/pencil.yaml" 60 1920x1080 smpte "$cuda_in" "$cuda_out" CUDAMemory
against_cli cuda_xbr_odd "$tmp/xbr2.yaml" 30 641x361 ball "$cuda_in" "$cuda_out" CUDAMemory
against_cli staged_pencil_odd "$tmp/pencil.yaml" 30 641x361 snow "" "" system
against_cli staged_xbr_1080p "$tmp/xbr2.yaml" 30 1920x1080 smpte "" "" system
against_cli staged_nv12_pencil_odd "$tmp/pencil.yaml" 30 641x361 snow "" "" system NV12
against_cli cuda_i420_xbr_odd "$tmp/xbr2.yaml" 30 641x361 ball "$cuda_in" "$cuda_out" CUDAMemory I420

step "NVDEC: nvh264dec's NV12 in CUDA memory into the element, against stylepipe run (NVDEC, CUDA)"
clip=$out/clip_1080p.mp4
make_hd_clip "$clip" || fail "ffmpeg: the test clip"
# shellcheck disable=SC2046
gst env GST_DEBUG=stylepipe:5 gst-launch-1.0 -v $(nvdec_pipeline "$clip" configs/pencil.yaml 0 \
  video/x-raw,format=RGBA ! filesink location="$tmp/gst.rgba") >"$out/nvdec.log" 2>&1 || fail "the NVDEC pipeline"
build-gpu/stylepipe run configs/pencil.yaml -i "$clip" --backend cuda --hwdec nvdec --progress none \
  --codec rawvideo -f rawvideo --pix-fmt rgba -o "$tmp/cli.rgba" --overwrite >"$out/nvdec_cli.log" 2>&1 ||
  fail "stylepipe run --hwdec nvdec"
stats=$(stats_of "$out/nvdec.log")
echo "nvdec: $stats"
caps_of "$out/nvdec.log"
grep -m4 -E "CUDA context query|proposed|CUDA memory on|NV12" "$out/nvdec.log" | sed 's/.*stylepipe0> /  /' | cut -c1-200
[ "$(field "$stats" device-frames)" = 45 ] && [ "$(field "$stats" yuv-frames)" = 45 ] &&
  [ "$(field "$stats" uploads)" = 0 ] && [ "$(field "$stats" staged-cuda-frames)" = 0 ] &&
  echo "ok: 45 NV12 frames converted and stylized in place: no upload, download or staging" ||
  fail "NVDEC: frames were copied, or not NV12 (stats above)"
if cmp -s "$tmp/gst.rgba" "$tmp/cli.rgba" && [ -s "$tmp/cli.rgba" ]; then
  echo "ok: 45 frames of 1920x1080 equal stylepipe run --hwdec nvdec --backend cuda byte for byte"
else
  fail "NVDEC: the element's frames differ from the CLI's: $(cmp -l "$tmp/gst.rgba" "$tmp/cli.rgba" 2>/dev/null | wc -l) bytes, sizes $(stat -c %s "$tmp/gst.rgba" "$tmp/cli.rgba" | tr '\n' ' ')"
fi
rm -f "$tmp"/*.rgba

step "compute-sanitizer memcheck (CUDA memory pipeline)"
gst env CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 gst-launch-1.0 -q videotestsrc num-buffers=8 pattern=snow ! \
  video/x-raw,format=RGBA,width=321,height=241 ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! \
  stylepipe config="$tmp/pencil.yaml" backend=cuda ! cudadownload ! fakesink >"$out/memcheck.log" 2>&1
echo "memcheck (system memory uploaded to CUDA memory) rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
# shellcheck disable=SC2046
gst env CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 gst-launch-1.0 -q $(nvdec_pipeline "$clip" "$tmp/pencil.yaml" 0) \
  >"$out/memcheck_nvdec.log" 2>&1
echo "memcheck (NVDEC's NV12) rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck_nvdec.log" | tail -1)"

step "benchmark: NVDEC -> stylepipe (pencil) -> cudadownload -> fakesink, 1080p, against stylepipe run"
# 1,800 frames of the 1080p60 bench clip (.devkit/bench_part_1080p60.mp4, 600 frames, three times over).
bench_clip=$out/bench_1800.mp4
ffmpeg -hide_banner -loglevel error -y -stream_loop 2 -i .devkit/bench_part_1080p60.mp4 -an -c copy "$bench_clip" ||
  fail "ffmpeg: the bench clip"
frames=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$bench_clip")
seconds() { sed -n 's/.*Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\).*/\1 \2 \3/p' "$1" |
            awk '{printf "%.3f", $1 * 3600 + $2 * 60 + $3}'; }
for run in 1 2 3; do
  # shellcheck disable=SC2046
  gst env GST_DEBUG=stylepipe:4 gst-launch-1.0 $(nvdec_pipeline "$bench_clip" configs/bench/pencil.yaml 0) >"$out/bench_gst_$run.log" 2>&1 ||
    fail "the bench pipeline"
  # The decode and download alone, for reference (NV12: less to download than RGBA).
  gst gst-launch-1.0 filesrc location="$bench_clip" ! qtdemux ! h264parse ! nvh264dec ! \
    "video/x-raw(memory:CUDAMemory),format=NV12" ! queue ! cudadownload ! fakesink >"$out/bench_gst_decode_$run.log" 2>&1
  t0=$(date +%s.%N)
  build-gpu/stylepipe run configs/bench/pencil.yaml -i "$bench_clip" --backend cuda --hwdec nvdec --progress none \
    --codec rawvideo -f rawvideo --pix-fmt rgba -o /dev/null --overwrite --stats-json "$out/bench_cli_$run.json" \
    >"$out/bench_cli_$run.log" 2>&1 || fail "stylepipe run (bench)"
  t1=$(date +%s.%N)
  g=$(seconds "$out/bench_gst_$run.log") dec=$(seconds "$out/bench_gst_decode_$run.log")
  cli_fps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fps"])' "$out/bench_cli_$run.json" 2>/dev/null || echo 0)
  awk -v n="$frames" -v g="$g" -v d="$dec" -v f="$cli_fps" -v c="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" 'BEGIN {
    printf "run %d: element %.1f fps (%.3f s playing), decode+download only %.1f fps; stylepipe run %.1f fps (stats), %.1f fps with start-up (%.3f s): element / run %.2f\n",
      '"$run"', n / g, g, n / d, f, n / c, c, (n / g) / f }'
done
stats=$(stats_of "$out/bench_gst_3.log")
echo "bench: $stats"

step "live: videotestsrc is-live 60 fps 256x240 -> stylepipe (xbr 4x) -> fakesink sync, 30 s"
gstreamer/tests/live_latency.sh "$out/live" 1800 || fail "live: over 2 ms at p99, or frames dropped"

echo
[ "$status" -eq 0 ] && echo "gpu_check: all passed" || echo "gpu_check: failures above"
exit "$status"
