"""Helpers of the Python module's tests: fresh random pictures, the CLI as the oracle."""
import os
import random
import subprocess
import tempfile

import numpy as np

# An ASan build preloads ASan's shared runtime into this interpreter for the
# module; the programs the tests run (the CLI has its own runtime, FFmpeg none)
# must not inherit it: a second runtime makes the CLI refuse to start.
UNDER_ASAN = "asan" in os.environ.pop("LD_PRELOAD", "")

SEED = int(os.environ.get("SP_TEST_SEED", random.SystemRandom().randrange(1 << 62)))
print("[stylepipe python tests] random seed %d (set SP_TEST_SEED to replay)" % SEED)


def rng(salt=0):
    return np.random.default_rng(SEED + salt)


def photo(height, width, generator):
    """Smooth gradients, a few discs and noise: photo-like, never constant."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    image = np.empty((height, width, 4), np.float64)
    for c in range(3):
        a, b, phase = generator.uniform(0.01, 0.08, 2).tolist() + [generator.uniform(0, 6.28)]
        image[..., c] = 128 + 100 * np.sin(a * x + b * y + phase)
    for _ in range(4):
        cy, cx, r = generator.uniform(0, height), generator.uniform(0, width), generator.uniform(3, max(4, height / 3))
        image[(y - cy) ** 2 + (x - cx) ** 2 < r * r, :3] = generator.uniform(0, 255, 3)
    image[..., :3] += generator.normal(0, 6, (height, width, 3))
    image[..., 3] = 255
    return np.clip(image, 0, 255).astype(np.uint8)


def stylepipe_binary():
    return os.environ["STYLEPIPE_BINARY"]


def cli_frames(config_text, frames, out_shape, extra=()):
    """`stylepipe run` of raw RGBA frames to raw RGBA frames on the CPU: the oracle."""
    with tempfile.TemporaryDirectory() as tmp:
        config, raw_in, raw_out = (os.path.join(tmp, n) for n in ("c.yaml", "in.rgba", "out.rgba"))
        with open(config, "w") as f:
            f.write(config_text)
        with open(raw_in, "wb") as f:
            for frame in frames:
                f.write(np.ascontiguousarray(frame).tobytes())
        height, width = frames[0].shape[:2]
        subprocess.run([stylepipe_binary(), "run", config, "-f", "rawvideo", "--pix-fmt", "rgba", "--size",
                        "%dx%d" % (width, height), "--rate", "30", "-i", raw_in, "--backend", "cpu", "--progress",
                        "none", "--codec", "rawvideo", "-f", "rawvideo", "--pix-fmt", "rgba", "-o", raw_out,
                        *extra], check=True, capture_output=True)
        data = np.fromfile(raw_out, np.uint8)
    return data.reshape((-1,) + tuple(out_shape))


def framemd5(path, streams="0"):
    """ffmpeg's framemd5 of `path`'s streams (`-map` STREAMS), without its header: each packet's times and md5."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", streams, "-f", "framemd5", "-"],
                         check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if not line.startswith("#")]
