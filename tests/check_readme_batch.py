#!/usr/bin/env python3
"""README's "A folder of clips" recipe runs as written.

    check_readme_batch.py README STYLEPIPE

Generates two clips of different sizes in clips/ of a scratch folder (where
`configs/` is the checkout's and `stylepipe` on PATH the binary under test),
runs the recipe's ```sh block with bash -e, and checks that each clip got its
output and an entry in the stats. Exits 1 on any failure.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def main():
    readme, stylepipe = sys.argv[1], os.path.abspath(sys.argv[2])
    text = Path(readme).read_text(encoding="utf-8")
    section = text.split("\n### A folder of clips\n", 1)
    if len(section) != 2:
        sys.exit(f"{readme}: no '### A folder of clips' section")
    blocks = re.findall(r"```sh\n(.*?)```", section[1].split("\n## ", 1)[0], re.S)
    if not blocks:
        sys.exit(f"{readme}: the folder-of-clips section has no ```sh recipe")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.symlink(Path(readme).resolve().parent / "configs", root / "configs")
        (root / "bin").mkdir()
        os.symlink(stylepipe, root / "bin" / "stylepipe")
        (root / "clips").mkdir()
        for name, size in (("day", "160x120"), ("night", "96x64")):
            subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=25", "-t", "0.4",
                            "-pix_fmt", "yuv420p", f"clips/{name}.mp4"], cwd=root, check=True)
        env = dict(os.environ, PATH=f"{root / 'bin'}:{os.environ['PATH']}")
        result = subprocess.run(["bash", "-e", "-c", blocks[0]], cwd=root, env=env)
        if result.returncode != 0:
            sys.exit(f"the README's folder-of-clips recipe failed (exit {result.returncode})")
        outputs = sorted(p.name for p in (root / "out").glob("*.mp4"))
        if outputs != ["day_pencil.mp4", "night_pencil.mp4"]:
            sys.exit(f"the recipe wrote {outputs}, not day_pencil.mp4 and night_pencil.mp4")
        stats = json.loads((root / "out" / "batch.json").read_text())
        if [Path(e["input"]).name for e in stats["inputs"]] != ["day.mp4", "night.mp4"]:
            sys.exit(f"the stats' inputs are not one entry per clip in order: {stats['inputs']}")
    print("the README's folder-of-clips recipe stylizes every clip")


if __name__ == "__main__":
    main()
