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
    video_loop(args.stylepipe, 300)


def video_loop(binary, frames):
    """VideoReader -> chain -> VideoWriter in Python against `stylepipe run` on the same 1080p H.264 clip
    (pencil, libx264 ultrafast), wall-clock fps of each, best of 3."""
    with tempfile.TemporaryDirectory() as tmp:
        clip = os.path.join(tmp, "clip.mp4")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30",
                        "-frames:v", str(frames), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip],
                       check=True)
        config = "configs/bench/pencil.yaml"
        cli, python = [], []
        for run in range(3):
            out = os.path.join(tmp, "cli%d.mp4" % run)
            t0 = time.perf_counter()
            subprocess.run([binary, "run", config, "-i", clip, "-o", out, "--codec", "libx264", "--preset", "ultrafast",
                            "--progress", "none"], check=True, capture_output=True)
            cli.append(frames / (time.perf_counter() - t0))
            out = os.path.join(tmp, "py%d.mp4" % run)
            t0 = time.perf_counter()
            chain = stylepipe.Chain.from_yaml(config, device="cuda:0")
            reader = stylepipe.VideoReader(clip, device="cuda:0")
            with stylepipe.VideoWriter(out, like=reader, codec="libx264", preset="ultrafast") as writer:
                for frame in reader:
                    writer.write(chain(frame), time=frame.time)
            python.append(frames / (time.perf_counter() - t0))
        print(json.dumps({"video_loop": {"frames": frames, "cli_fps": cli, "python_fps": python,
                                         "nvdec": reader.hardware_decoding}}))
        print("\nvideo 1080p pencil -> libx264 ultrafast, %d frames: stylepipe run %.1f fps, Python loop %.1f fps, "
              "ratio %.3f (NVDEC %s)" % (frames, max(cli), max(python), max(python) / max(cli), reader.hardware_decoding))


if __name__ == "__main__":
    main()
