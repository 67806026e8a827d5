#!/usr/bin/env python3
"""Runs each ```python recipe of README's "## Python" section as written.

    check_readme_python.py README.md SOURCE_DIR

Each runs in a fresh folder where `configs/` is the checkout's, with the
module on PYTHONPATH. A recipe that imports torch or cupy runs only where that
library sees a GPU, and says so when it is skipped. Exits 1 if any fails.
"""
import os
import re
import subprocess
import sys
import tempfile


def gpu_library_ready(name):
    probe = {"torch": "import torch; assert torch.cuda.is_available()",
             "cupy": "import cupy; assert cupy.cuda.runtime.getDeviceCount() > 0"}[name]
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def main():
    readme, source = sys.argv[1], sys.argv[2]
    text = open(readme).read()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    recipes = re.findall(r"```python\n(.*?)```", section, re.S)
    if not recipes:
        print("README has no ```python recipe under ## Python")
        return 1
    failed = skipped = 0
    for number, code in enumerate(recipes, 1):
        needs = [lib for lib in ("torch", "cupy") if re.search(r"^import .*\b%s\b" % lib, code, re.M)]
        missing = [lib for lib in needs if not gpu_library_ready(lib)]
        first = code.strip().splitlines()[0]
        if missing:
            print("recipe %d (%s): skipped: %s with a GPU is not here" % (number, first, ", ".join(missing)))
            skipped += 1
            continue
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(os.path.join(source, "configs"), os.path.join(tmp, "configs"))
            result = subprocess.run([sys.executable, "-c", code], cwd=tmp, capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            failed += 1
            print("recipe %d (%s): FAILED\n%s%s" % (number, first, result.stdout, result.stderr))
        else:
            print("recipe %d (%s): ok" % (number, first))
    print("%d passed, %d failed, %d skipped" % (len(recipes) - failed - skipped, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
