#!/usr/bin/env python3
"""Blue-noise check of halftone dots (Ulichney): radially averaged power
spectrum (RAPS) and anisotropy of points_out CSV files (x,y per dot).

  spectrum.py WIDTH HEIGHT dots1.csv [dots2.csv ...]

Several files (realizations, e.g. different `seed`s on a constant grey) are
averaged; the anisotropy floor of K isotropic realizations is -10 log10(K) dB.
Prints one line per annulus: frequency (cycles per pixel), RAPS, anisotropy
(dB), and the rectangular/hexagonal principal frequencies. Pure Python
(no numpy): meant for a few thousand dots on a frame of ~128 px.
"""
import cmath
import math
import sys


def read(path):
    pts = []
    with open(path) as f:
        next(f)
        for line in f:
            x, y = line.split(",")
            pts.append((float(x), float(y)))
    return pts


def main():
    w, h, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    side = min(w, h)
    half = side // 2
    mean = [[0.0] * side for _ in range(side)]
    count = 0
    for path in files:
        pts = [p for p in read(path) if p[0] < side and p[1] < side]
        count = len(pts)
        ex = [[cmath.exp(-2j * math.pi * u * x / side) for (x, _) in pts] for u in range(-half, half)]
        ey = [[cmath.exp(-2j * math.pi * v * y / side) for (_, y) in pts] for v in range(-half, half)]
        for v in range(side):
            for u in range(side):
                s = sum(a * b for a, b in zip(ex[u], ey[v]))
                mean[v][u] += abs(s) ** 2 / len(pts) / len(files)
    rings = [[0.0, 0.0, 0] for _ in range(half)]
    for v in range(-half, half):
        for u in range(-half, half):
            r = int(round(math.hypot(u, v)))
            if 0 < r < half:
                x = mean[v + half][u + half]
                rings[r][0] += x
                rings[r][1] += x * x
                rings[r][2] += 1
    density = count / (side * side)
    print(f"# {count} dots in {side}x{side}; principal frequency {math.sqrt(density):.4f} (rect) "
          f"{math.sqrt(2 * density / math.sqrt(3)):.4f} (hex) cycles/px")
    print("# f_cycles_per_px raps anisotropy_db")
    for r in range(1, half):
        s, s2, n = rings[r]
        m = s / n
        var = max(s2 / n - m * m, 1e-30)
        print(f"{r / side:.4f} {m:.4f} {10 * math.log10(var / (m * m)):.2f}")


if __name__ == "__main__":
    main()
