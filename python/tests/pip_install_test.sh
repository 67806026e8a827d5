#!/usr/bin/env bash
# `pip install .` as the README says, offline (--no-index): into a fresh venv
# that sees Debian's NumPy, from the build folder BUILD_DIR; the installed
# module then runs a chain, and gives the CLI's pictures.
#   python/tests/pip_install_test.sh PYTHON SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 source=$2 build=$3
unset PYTHONPATH  # the installed package is under test, not the build folder's
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0  # the preloaded runtime also runs mktemp, pip and venv
"$python" -c "import venv, ensurepip" 2>/dev/null || { echo "pip_install: SKIP: no venv/ensurepip (apt-get install python3-venv)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
STYLEPIPE_BUILD_DIR=$build "$tmp/venv/bin/pip" install --no-index --quiet "$source"
cd "$tmp"  # away from the checkout: the installed package, not the source one
"$tmp/venv/bin/python" - "$tmp" <<'PY'
import subprocess, sys, os, numpy as np, stylepipe
os.environ.pop("LD_PRELOAD", None)  # the CLI has its own ASan runtime, where it has one
tmp = sys.argv[1]
assert stylepipe.__file__.startswith(os.path.join(tmp, "venv")), stylepipe.__file__
image = np.random.default_rng().integers(0, 256, (30, 44, 4), dtype=np.uint8)
image.tofile(tmp + "/in.rgba")
subprocess.run([os.environ["STYLEPIPE_BINARY"], "run", os.path.join(os.environ["SOURCE_DIR"], "configs/pencil.yaml"),
                "-f", "rawvideo", "--pix-fmt", "rgba", "--size", "44x30", "-i", tmp + "/in.rgba", "--backend", "cpu",
                "--progress", "none", "--codec", "rawvideo", "-f", "rawvideo", "--pix-fmt", "rgba", "-o", tmp + "/out.rgba"],
               check=True, capture_output=True)
expected = np.fromfile(tmp + "/out.rgba", np.uint8).reshape(image.shape)
np.testing.assert_array_equal(stylepipe.Chain.from_yaml(os.path.join(os.environ["SOURCE_DIR"], "configs/pencil.yaml"))(image), expected)
print("pip_install: the installed module gives the CLI's pictures")
PY
