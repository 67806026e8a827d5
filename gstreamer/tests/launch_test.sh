#!/usr/bin/env bash
# The `stylepipe` element in gst-launch-1.0 pipelines, against `stylepipe run`
# (the CLI) on the same raw frames: a tee writes videotestsrc's frames to a
# file while the element's output goes to another, and the CLI stylizes the
# first. Patterns, sizes (odd) and colours come from a fresh seed per run
# (SP_TEST_SEED replays one). Needs GST_PLUGIN_PATH at the build's plugin.
# Usage: launch_test.sh STYLEPIPE_BINARY
set -euo pipefail
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0  # a preloaded ASan runtime also runs mktemp and the GStreamer tools
stylepipe=${1:?usage: launch_test.sh STYLEPIPE_BINARY}
command -v gst-launch-1.0 >/dev/null || { echo "SKIP: no gst-launch-1.0"; exit 77; }
gst-inspect-1.0 videotestsrc >/dev/null 2>&1 || { echo "SKIP: no videotestsrc (gstreamer1.0-plugins-base)"; exit 77; }
gst-inspect-1.0 stylepipe >/dev/null 2>&1 || { echo "FAIL: no stylepipe element (GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-})"; exit 1; }

seed=${SP_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "[stylepipe gst-launch tests] random seed $seed (set SP_TEST_SEED to replay)"
RANDOM=$seed
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A moving or noisy pattern, never a constant one, in random colours.
patterns=(smpte snow ball circular pinwheel spokes gradient zone-plate chroma-zone-plate colors smpte100)
random_source() {  # frames width height
  local pattern=${patterns[RANDOM % ${#patterns[@]}]}
  local fg=$(( (RANDOM << 16 | RANDOM) | 0xff000000 )) bg=$(( (RANDOM << 16 | RANDOM) & 0x00ffffff | 0xff000000 ))
  echo "videotestsrc num-buffers=$1 pattern=$pattern foreground-color=$fg background-color=$bg" \
       "horizontal-speed=$((RANDOM % 7 + 1)) kx2=$((RANDOM % 20)) kt=$((RANDOM % 5 + 1)) !" \
       "video/x-raw,format=RGBA,width=$2,height=$3,framerate=30/1"
}

# The element's frames equal the CLI's, byte for byte.
against_cli() {  # name config-text scale
  local name=$1 config=$work/$1.yaml scale=$3 frames=$((RANDOM % 4 + 5))
  local width=$((RANDOM % 60 * 2 + 41)) height=$((RANDOM % 40 * 2 + 31))
  printf '%s' "$2" >"$config"
  local source
  source=$(random_source "$frames" "$width" "$height")
  echo "$name: $source"
  # shellcheck disable=SC2086
  if ! gst-launch-1.0 -q $source ! tee name=t ! queue ! filesink location="$work/$name.in.rgba" \
       t. ! queue ! stylepipe config="$config" backend=cpu ! filesink location="$work/$name.gst.rgba" \
       >"$work/$name.log" 2>&1; then
    fail "$name: gst-launch-1.0 failed"; cat "$work/$name.log"; return
  fi
  # (An ASan build preloads ASan's shared runtime for gst-launch-1.0; the CLI has its own.)
  env -u LD_PRELOAD "$stylepipe" run "$config" -f rawvideo --pix-fmt rgba --size "${width}x${height}" --rate 30 \
    -i "$work/$name.in.rgba" --backend cpu --progress none --codec rawvideo -f rawvideo --pix-fmt rgba \
    -o "$work/$name.cli.rgba" >"$work/$name.cli.log" 2>&1 || { fail "$name: stylepipe run failed"; cat "$work/$name.cli.log"; return; }
  local in_bytes gst_bytes
  in_bytes=$(stat -c %s "$work/$name.in.rgba")
  gst_bytes=$(stat -c %s "$work/$name.gst.rgba")
  # EOS drains every frame: all of them are in the output, at the scaled size.
  [ "$in_bytes" -eq $((frames * width * height * 4)) ] || fail "$name: $in_bytes input bytes for $frames frames"
  [ "$gst_bytes" -eq $((frames * width * height * 4 * scale * scale)) ] ||
    fail "$name: $gst_bytes output bytes for $frames frames of ${width}x${height} x$scale"
  ! cmp -s "$work/$name.in.rgba" <(head -c "$in_bytes" /dev/zero) || fail "$name: all-zero input frames"
  if cmp -s "$work/$name.gst.rgba" "$work/$name.cli.rgba"; then
    echo "ok: $name: $frames frames of ${width}x${height} equal the CLI's"
  else
    fail "$name: the element's frames differ from the CLI's ($(cmp "$work/$name.gst.rgba" "$work/$name.cli.rgba" 2>&1 | head -1))"
  fi
}

against_cli pencil_temporal $'pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n' 1
against_cli xbr $'pipeline:\n  - xbr: {scale: 2}\n' 2

# A bad config fails the pipeline, and the error names its file:line:col.
printf 'pipeline:\n  - pencil: {color: true}\n  - xbr: {scale: 9}\n' >"$work/bad.yaml"
if gst-launch-1.0 videotestsrc num-buffers=1 ! stylepipe config="$work/bad.yaml" ! fakesink >"$work/bad.log" 2>&1; then
  fail "a bad config ran"
elif grep -q "ERROR: from element .*stylepipe.*$work/bad.yaml:3:18: error:" "$work/bad.log"; then
  echo "ok: a bad config fails with $work/bad.yaml:3:18 on the bus"
else
  fail "the bad config's error does not name bad.yaml:3:18"; cat "$work/bad.log"
fi

# NULL -> PLAYING -> NULL with the leaks tracer: no object left alive at exit.
GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 gst-launch-1.0 -q videotestsrc num-buffers=5 ! \
  video/x-raw,format=RGBA,width=65,height=47 ! stylepipe backend=cpu \
  pipeline="pipeline: [{pencil: {color: true, temporal_smoothing: 0.8}}, {xbr: {scale: 2}}]" ! fakesink \
  >"$work/leaks.log" 2>&1 || { fail "the leaks run failed"; tail -20 "$work/leaks.log"; }
# The tracer registers its record's format (with %s) first: a record of a live object names its type.
if ! grep -q "new format string: object-alive" "$work/leaks.log"; then
  fail "the leaks tracer did not run"
elif grep -E "object-alive, type-name=\(string\)[^%]" "$work/leaks.log" | head -20 | grep .; then
  fail "objects left alive (above)"
else
  echo "ok: the leaks tracer finds no object alive after NULL -> PLAYING -> NULL"
fi

[ "$failures" -eq 0 ] && echo "launch_test: all passed" || echo "launch_test: $failures failed"
exit $((failures > 0))
