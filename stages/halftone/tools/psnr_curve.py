#!/usr/bin/env python3
"""PSNR between the Gaussian-blurred original and the Gaussian-blurred
halftone for several sigma (the seed's Fig. 4), on the luma of two images.

  psnr_curve.py original.png halftone.png [sigma ...]   (default 1 2 3)

Uses ffmpeg to read the images as 8-bit grey; pure Python blur (slow on
large frames: meant for ~256x256).
"""
import math
import subprocess
import sys


def grey(path):
    wh = subprocess.check_output(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                  "stream=width,height", "-of", "csv=p=0", path]).decode().strip().split(",")
    w, h = int(wh[0]), int(wh[1])
    raw = subprocess.check_output(["ffmpeg", "-loglevel", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo",
                                   "-pix_fmt", "gray", "-"])
    return w, h, [b / 255.0 for b in raw[: w * h]]


def blur(img, w, h, sigma):
    r = int(math.ceil(3 * sigma))
    k = [math.exp(-i * i / (2 * sigma * sigma)) for i in range(-r, r + 1)]
    s = sum(k)
    k = [x / s for x in k]
    tmp = [0.0] * (w * h)
    for y in range(h):
        row = img[y * w:(y + 1) * w]
        for x in range(w):
            tmp[y * w + x] = sum(k[i + r] * row[min(max(x + i, 0), w - 1)] for i in range(-r, r + 1))
    out = [0.0] * (w * h)
    for y in range(h):
        for x in range(w):
            out[y * w + x] = sum(k[i + r] * tmp[min(max(y + i, 0), h - 1) * w + x] for i in range(-r, r + 1))
    return out


def main():
    w, h, a = grey(sys.argv[1])
    w2, h2, b = grey(sys.argv[2])
    if (w, h) != (w2, h2):
        sys.exit("images differ in size")
    sigmas = [float(s) for s in sys.argv[3:]] or [1.0, 2.0, 3.0]
    for sigma in sigmas:
        ba, bb = blur(a, w, h, sigma), blur(b, w, h, sigma)
        mse = sum((x - y) ** 2 for x, y in zip(ba, bb)) / len(ba)
        print(f"sigma {sigma:g}: PSNR {10 * math.log10(1.0 / max(mse, 1e-12)):.2f} dB")


if __name__ == "__main__":
    main()
