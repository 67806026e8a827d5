"""Times stylepipe.Chain from Python on PyTorch CUDA tensors against `stylepipe bench`.

    PYTHONPATH=build/python python3 scripts/bench-python.py build/stylepipe [--size 1920x1080] [--frames 300]

For each config: the chain's device fps from `stylepipe bench` (CUDA events,
median), the fps of a Python loop of `chain(t, out=buf)` (CUDA events around
the loop after a warm-up; median of 5 loops), their ratio, and what the Python
call adds per frame. The host side of one call is timed too: what the call
costs the calling thread.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch

import stylepipe

CONFIGS = ["configs/bench/pencil.yaml", "configs/bench/xbr2.yaml"]


def bench_fps(binary, config, size, frames):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "bench.json")
        subprocess.run([binary, "bench", "--config", config, "--size", size, "--frames", str(frames), "--warmup", "30",
                        "--backend", "cuda", "--frames-in-flight", "1", "--json", report], check=True, capture_output=True)
        with open(report) as f:
            return json.load(f)


def stage_ms(report):
    """The stages' own device time a frame (median of each step, conversions left out):
    what chain(t, out=buf) runs; `device_ms_per_frame` adds the yuv420p conversions."""
    steps = report["device_resident"]["steps"]
    return sum(step["p50_ms"] for step in steps if step["name"] not in ("convert_in", "convert_out"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("stylepipe")
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--frames", type=int, default=300)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    rng = np.random.default_rng()
    image = torch.from_numpy(rng.integers(0, 256, (height, width, 4), dtype=np.uint8)).cuda()
    rows = []
    for config in CONFIGS:
        report = bench_fps(args.stylepipe, config, args.size, args.frames)
        chain = stylepipe.Chain.from_yaml(config, device="cuda:0")
        out = torch.empty(chain.output_shape(image.shape), dtype=torch.uint8, device="cuda")
        stream = torch.cuda.current_stream()
        for _ in range(30):
            chain(image, out=out)
        loops, host_us = [], []
        for _ in range(5):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record(stream)
            t0 = time.perf_counter()
            for _ in range(args.frames):
                chain(image, out=out)
            host_us.append((time.perf_counter() - t0) / args.frames * 1e6)
            end.record(stream)
            end.synchronize()
            loops.append(start.elapsed_time(end) / args.frames)
        python_ms = statistics.median(loops)
        rows.append((config, report, python_ms, statistics.median(host_us)))
        print(json.dumps({"config": config, "python_ms_per_frame": python_ms, "loops_ms": loops,
                          "python_host_us_per_call": statistics.median(host_us),
                          "bench_stage_ms": stage_ms(report), "bench": report["device_resident"]}))
    print("\n%-28s %11s %11s %11s %7s %14s %13s" % ("config", "stages fps", "bench fps", "python fps", "ratio",
                                                    "added us/frame", "host us/call"))
    for config, report, python_ms, host in rows:
        stages = stage_ms(report)
        print("%-28s %11.1f %11.1f %11.1f %7.3f %14.1f %13.1f" % (
            config, 1e3 / stages, report["device_resident"]["device_fps"], 1e3 / python_ms, stages / python_ms,
            (python_ms - stages) * 1e3, host))


if __name__ == "__main__":
    main()
