#!/usr/bin/env bash
# The Debian package end to end: `cpack -G DEB` from the build folder; its
# fields and files (dependencies computed by dpkg-shlibdeps, /usr/bin/stylepipe,
# the configs, the man page, the copyright file); `apt-get install ./stylepipe_*.deb`;
# the installed binary stylizes a generated clip with a shipped config (the
# output is a video of the input's frame count, size, and other pictures);
# the Python module and the GStreamer element, where the build has them, give
# the installed CLI's pictures; `apt-get purge` leaves no /usr/bin/stylepipe.
#
#   tests/deb_package_test.sh BUILD_DIR HAS_CUDA(0|1)
#
# Exits 77 (skipped) when not root, without apt-get/dpkg, when a stylepipe
# package is installed already (it is not replaced), or in a CUDA build: its
# CUDA libraries are not in Debian packages dpkg-shlibdeps can name; package
# the CPU-only build (scripts/build-cpu-only.sh). KEEP_TMP=1 keeps the work dir.
set -euo pipefail

skip() { echo "deb_package: SKIP: $*"; exit 77; }
fail() { echo "deb_package: FAIL: $*" >&2; exit 1; }
note() { echo "deb_package: $*"; }

(($# == 2)) || fail "usage: $0 BUILD_DIR HAS_CUDA"
build=$(cd "$1" && pwd)
[[ "$2" == 0 ]] || skip "a CUDA build: package the CPU-only one (scripts/build-cpu-only.sh), whose dependencies are all Debian packages"
[[ "$(id -u)" -eq 0 ]] || skip "needs root to install a package"
for b in apt-get dpkg dpkg-deb dpkg-shlibdeps cpack; do
  command -v "$b" >/dev/null || skip "$b is not installed"
done
for b in ffmpeg ffprobe; do command -v "$b" >/dev/null || fail "$b is not installed"; done
if dpkg-query -W -f='${Status}' stylepipe 2>/dev/null | grep -q "install ok installed"; then
  skip "a stylepipe package is installed already; not replacing it"
fi

tmp=$(mktemp -d /tmp/stylepipe-deb.XXXXXX)
chmod 755 "$tmp"  # apt's sandbox user reads the .deb from here
installed=0
cleanup() {
  local rc=$?
  if ((installed)); then apt-get purge -y -qq -o DPkg::Lock::Timeout=300 stylepipe >/dev/null 2>&1 || true; fi
  if [[ "${KEEP_TMP:-0}" == 1 ]]; then note "kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT

# --- the package -----------------------------------------------------------
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) \
  || { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$tmp"/pkg/stylepipe_*.deb)
((${#debs[@]} == 1)) && [[ -f "${debs[0]}" ]] || fail "cpack made no single stylepipe_*.deb in $tmp/pkg"
deb=${debs[0]}
note "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

depends=$(dpkg-deb -f "$deb" Depends)
note "Depends: $depends"
# Libraries the binary links, each of which only dpkg-shlibdeps would have found.
for lib in libavcodec libavformat libswscale libyaml-cpp libc6; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
grep -Eqi "libcuda|cudart|cufft|curand|nvidia" <<<"$depends" && fail "a CPU-only package depends on CUDA: $depends"

contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for path in ./usr/bin/stylepipe ./usr/share/doc/stylepipe/copyright ./usr/share/man/man1/stylepipe.1.gz; do
  grep -qx "$path" <<<"$contents" || fail "$path is not in the package"
done
shipped=$(cd "$(dirname "$0")/../configs" && find . -name '*.yaml' -o -name stylepipe.schema.json | sort)
for config in $shipped; do
  grep -qx "./usr/share/stylepipe/configs/${config#./}" <<<"$contents" \
    || fail "configs/${config#./} is not in /usr/share/stylepipe/configs"
done

# --- install, run a shipped config, remove ---------------------------------
apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$deb" >"$tmp/apt.log" 2>&1 \
  || { cat "$tmp/apt.log" >&2; fail "apt-get install $deb failed"; }
installed=1
[[ -x /usr/bin/stylepipe ]] || fail "/usr/bin/stylepipe is missing after apt-get install"
man -w stylepipe >/dev/null 2>&1 || [[ -f /usr/share/man/man1/stylepipe.1.gz ]] || fail "no man page installed"
zcat /usr/share/man/man1/stylepipe.1.gz | grep -q -- '--backend' || fail "the man page lacks run's --backend option"
/usr/bin/stylepipe --version | grep -qx "backends: cpu" || fail "the installed binary's --version: $(/usr/bin/stylepipe --version)"
/usr/bin/stylepipe validate /usr/share/stylepipe/configs/*.yaml /usr/share/stylepipe/configs/bench/*.yaml \
  >"$tmp/validate.log" 2>&1 || { cat "$tmp/validate.log" >&2; fail "the installed configs do not validate"; }

frames=12
ffmpeg -v error -f lavfi -i "testsrc2=size=160x120:rate=12" -frames:v "$frames" -pix_fmt yuv420p -c:v libx264 \
  "$tmp/clip.mp4"
/usr/bin/stylepipe run /usr/share/stylepipe/configs/pencil.yaml -i "$tmp/clip.mp4" -o "$tmp/pencil.mp4" \
  --progress none 2>"$tmp/run.log" || { cat "$tmp/run.log" >&2; fail "the installed stylepipe failed on pencil.yaml"; }
said=$(grep -c "this build has no CUDA" "$tmp/run.log" || true)
[[ "$said" == 1 ]] || { cat "$tmp/run.log" >&2; fail "--backend auto said 'this build has no CUDA' $said times, not once"; }

probe=$(ffprobe -v error -select_streams v:0 -count_frames \
  -show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 "$tmp/pencil.mp4")
[[ "$probe" == "h264,160,120,$frames" ]] || fail "output stream is '$probe', expected h264,160,120,$frames"
# Stylized: no output picture equals its input picture.
ffmpeg -v error -i "$tmp/clip.mp4" -f framemd5 - | grep -v '^#' | awk -F, '{ print $6 }' >"$tmp/in.md5"
ffmpeg -v error -i "$tmp/pencil.mp4" -f framemd5 - | grep -v '^#' | awk -F, '{ print $6 }' >"$tmp/out.md5"
[[ $(wc -l <"$tmp/out.md5") == "$frames" ]] || fail "decoding the output gave $(wc -l <"$tmp/out.md5") frames"
[[ -z "$(comm -12 <(sort "$tmp/in.md5") <(sort "$tmp/out.md5"))" ]] || fail "some output frames equal input frames"

# The Python module, where the build has one (STYLEPIPE_DEB_PYTHON=1), from
# Debian's python3 and its own dist-packages: the installed chain against the
# installed CLI on the same raw frames.
if [[ "${STYLEPIPE_DEB_PYTHON:-0}" == 1 ]]; then
  grep -q '^./usr/lib/python3/dist-packages/stylepipe/__init__.py$' <<<"$contents" || fail "the Python package is not in the .deb"
  LD_PRELOAD=${STYLEPIPE_DEB_PYTHON_PRELOAD:-} ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 /usr/bin/python3 - "$tmp" <<'PY' \
    || fail "the installed Python module does not give the installed CLI's pictures"
import os, subprocess, sys, numpy as np, stylepipe
os.environ.pop("LD_PRELOAD", None)  # the installed CLI has its own ASan runtime, where it has one
tmp = sys.argv[1]
assert stylepipe.__file__.startswith("/usr/lib/python3/dist-packages/"), stylepipe.__file__
image = np.random.default_rng().integers(0, 256, (48, 64, 4), dtype=np.uint8)
image.tofile(tmp + "/in.rgba")
subprocess.run(["/usr/bin/stylepipe", "run", "/usr/share/stylepipe/configs/xbr-live.yaml", "-f", "rawvideo", "--pix-fmt",
                "rgba", "--size", "64x48", "-i", tmp + "/in.rgba", "--backend", "cpu", "--progress", "none", "--codec",
                "rawvideo", "-f", "rawvideo", "--pix-fmt", "rgba", "-o", tmp + "/out.rgba"], check=True, capture_output=True)
chain = stylepipe.Chain.from_yaml("/usr/share/stylepipe/configs/xbr-live.yaml")
expected = np.fromfile(tmp + "/out.rgba", np.uint8).reshape(chain.output_shape(image.shape))
np.testing.assert_array_equal(chain(image), expected)
PY
  note "the installed Python module gives the installed CLI's pictures"
fi

# The GStreamer plugin, where the build has one (STYLEPIPE_DEB_GST_PLUGIN: its
# path under /usr), found by GStreamer's own plugin path with no variable set:
# the installed element against the installed CLI on the same raw frames.
if [[ -n "${STYLEPIPE_DEB_GST_PLUGIN:-}" ]]; then
  grep -qx "./usr/${STYLEPIPE_DEB_GST_PLUGIN}" <<<"$contents" || fail "/usr/${STYLEPIPE_DEB_GST_PLUGIN} is not in the .deb"
  gst_env=(env -u GST_PLUGIN_PATH -u GST_PLUGIN_PATH_1_0 GST_REGISTRY_1_0="$tmp/registry.bin"
           LD_PRELOAD="${STYLEPIPE_DEB_GST_PRELOAD:-}" ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0")
  "${gst_env[@]}" gst-inspect-1.0 stylepipe >"$tmp/inspect.log" 2>&1 || { cat "$tmp/inspect.log" >&2; fail "gst-inspect-1.0 finds no installed stylepipe element"; }
  # (merged /usr: GStreamer may name it through /lib)
  found=$(sed -n 's/^ *Filename *//p' "$tmp/inspect.log" | head -n 1)
  [[ -n "$found" && "$(realpath "$found")" == "$(realpath "/usr/${STYLEPIPE_DEB_GST_PLUGIN}")" ]] ||
    fail "gst-inspect-1.0 stylepipe loads '$found', not the installed /usr/${STYLEPIPE_DEB_GST_PLUGIN}"
  ffmpeg -v error -f lavfi -i "testsrc2=size=64x48:rate=10" -frames:v 5 -f rawvideo -pix_fmt rgba "$tmp/gst-in.rgba"
  "${gst_env[@]}" gst-launch-1.0 -q filesrc location="$tmp/gst-in.rgba" blocksize=$((64 * 48 * 4)) ! \
    video/x-raw,format=RGBA,width=64,height=48,framerate=10/1 ! stylepipe config=/usr/share/stylepipe/configs/xbr-live.yaml \
    backend=cpu ! filesink location="$tmp/gst-out.rgba" >"$tmp/gst.log" 2>&1 || { cat "$tmp/gst.log" >&2; fail "the installed element failed"; }
  /usr/bin/stylepipe run /usr/share/stylepipe/configs/xbr-live.yaml -f rawvideo --pix-fmt rgba --size 64x48 --rate 10 \
    -i "$tmp/gst-in.rgba" --backend cpu --progress none --codec rawvideo -f rawvideo --pix-fmt rgba -o "$tmp/cli-out.rgba" \
    2>"$tmp/run.log" || { cat "$tmp/run.log" >&2; fail "the installed CLI failed on raw frames"; }
  [[ -s "$tmp/cli-out.rgba" ]] && cmp -s "$tmp/gst-out.rgba" "$tmp/cli-out.rgba" || fail "the installed element's frames differ from the installed CLI's"
  note "the installed GStreamer element gives the installed CLI's pictures"
fi

apt-get purge -y -qq -o DPkg::Lock::Timeout=300 stylepipe >"$tmp/apt.log" 2>&1 \
  || { cat "$tmp/apt.log" >&2; fail "apt-get purge stylepipe failed"; }
installed=0
[[ ! -e /usr/bin/stylepipe && ! -e /usr/share/stylepipe ]] || fail "files remain after apt-get purge"
note "installed, stylized $frames frames with /usr/share/stylepipe/configs/pencil.yaml, removed"
