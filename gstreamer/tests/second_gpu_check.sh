#!/usr/bin/env bash
# On a GPU machine with two GPUs or more: the element on the second GPU (cuda-device-id=1), as the README's recipe
# runs it. Uploaded CUDA memory (cudaupload cuda-device-id=1) and NVDEC's NV12 from the second GPU's decoder
# (nvh264device1dec: nvh264dec is the first GPU's), each against `stylepipe run --backend cuda` byte for byte; the
# element's stats must name cuda:1 and show every frame in place; then memcheck of the NVDEC pipeline.
# Usage: gstreamer/tests/second_gpu_check.sh OUTDIR   (builds build-gpu/ with the plugin, as gpu_check.sh does)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=$(realpath -m "${1:?usage: gstreamer/tests/second_gpu_check.sh OUTDIR}")
mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }
[ "$(nvidia-smi -L | wc -l)" -ge 2 ] || { echo "SKIP: one GPU"; exit 77; }
. scripts/devkit-env.sh
# shellcheck source=gstreamer/tests/kit-gst.sh
. gstreamer/tests/kit-gst.sh  # gst, stats_of, field, build_plugin, make_hd_clip, nvdec_pipeline
build_plugin "$out" stylepipe gststylepipe || exit 1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n' >"$d/pencil.yaml"

gst env GST_DEBUG=stylepipe:4 gst-launch-1.0 -v videotestsrc num-buffers=30 pattern=smpte horizontal-speed=3 ! \
  "video/x-raw,format=RGBA,width=641,height=361,framerate=30/1" ! tee name=t ! queue ! filesink location="$d/in.raw" \
  t. ! queue ! cudaupload cuda-device-id=1 ! "video/x-raw(memory:CUDAMemory)" ! \
  stylepipe config="$d/pencil.yaml" backend=cuda cuda-device-id=1 ! "video/x-raw(memory:CUDAMemory)" ! \
  cudadownload cuda-device-id=1 ! video/x-raw,format=RGBA ! filesink location="$d/gst.rgba" >"$out/upload.log" 2>&1 ||
  fail "the upload pipeline"
stats=$(stats_of "$out/upload.log")
build-gpu/stylepipe run "$d/pencil.yaml" -f rawvideo --pix-fmt rgba --size 641x361 --rate 30 -i "$d/in.raw" \
  --backend cuda --progress none --codec rawvideo -f rawvideo --pix-fmt rgba -o "$d/cli.rgba" --overwrite \
  >"$out/upload_cli.log" 2>&1 || fail "stylepipe run (upload)"
grep -q 'device=(string)cuda:1' <<<"$stats" && [ "$(field "$stats" device-frames)" = 30 ] ||
  fail "upload: not on cuda:1 or not in place: $stats"
cmp -s "$d/gst.rgba" "$d/cli.rgba" && [ -s "$d/cli.rgba" ] && echo "ok: upload on GPU 1: 30 frames in place, equal to stylepipe run" ||
  fail "upload on GPU 1 differs from stylepipe run"

clip=$d/clip.mp4
make_hd_clip "$clip" || fail "ffmpeg: the test clip"
# shellcheck disable=SC2046
gst env GST_DEBUG=stylepipe:4 gst-launch-1.0 -v $(nvdec_pipeline "$clip" configs/pencil.yaml 1 \
  video/x-raw,format=RGBA ! filesink location="$d/gst2.rgba") \
  >"$out/nvdec.log" 2>&1 || fail "the NVDEC pipeline"
stats=$(stats_of "$out/nvdec.log")
build-gpu/stylepipe run configs/pencil.yaml -i "$clip" --backend cuda --hwdec nvdec --progress none --codec rawvideo \
  -f rawvideo --pix-fmt rgba -o "$d/cli2.rgba" --overwrite >"$out/nvdec_cli.log" 2>&1 || fail "stylepipe run (NVDEC)"
grep -q 'device=(string)cuda:1' <<<"$stats" && [ "$(field "$stats" device-frames)" = 45 ] &&
  [ "$(field "$stats" uploads)" = 0 ] && [ "$(field "$stats" staged-cuda-frames)" = 0 ] ||
  fail "NVDEC: not on cuda:1, or frames were copied: $stats"
cmp -s "$d/gst2.rgba" "$d/cli2.rgba" && [ -s "$d/cli2.rgba" ] &&
  echo "ok: NVDEC on GPU 1: 45 frames in place, no copies, equal to stylepipe run --hwdec nvdec" ||
  fail "NVDEC on GPU 1 differs from stylepipe run"
# shellcheck disable=SC2046
gst env CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool memcheck --error-exitcode 9 gst-launch-1.0 -q \
  $(nvdec_pipeline "$clip" configs/pencil.yaml 1) >"$out/memcheck.log" 2>&1 || fail "memcheck (NVDEC on GPU 1)"
echo "memcheck (NVDEC on GPU 1): $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
[ "$status" = 0 ] && echo "second_gpu_check: all passed"
exit "$status"
