#!/usr/bin/env python3
"""The GitHub Actions job in the README runs as written.

Finds the README's `jobs:` YAML block, checks that it is a workflow with
steps, and runs the steps that use the build (validating the configs,
stylizing a generated clip on the CPU) in a scratch folder where `configs/`
is the checkout's and `build/stylepipe` the binary under test. The set-up
step (apt, cmake) is what `scripts/install-deps.sh` and the build do already.

Usage: check_readme_ci_job.py README STYLEPIPE
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml


def readme_job(readme):
    text = Path(readme).read_text(encoding="utf-8")
    for block in text.split("```yaml\n")[1:]:
        workflow = yaml.safe_load(block.split("```", 1)[0])
        if isinstance(workflow, dict) and "jobs" in workflow:
            return workflow
    sys.exit(f"{readme}: no ```yaml block with a GitHub Actions workflow (jobs:)")


def main():
    readme, stylepipe = sys.argv[1], os.path.abspath(sys.argv[2])
    workflow = readme_job(readme)
    (name, job), = workflow["jobs"].items()
    steps = {step.get("name", step.get("uses")): step for step in job["steps"]}
    if "actions/checkout@v4" not in steps or not job.get("runs-on"):
        sys.exit(f"job {name}: needs runs-on and a checkout step")
    with tempfile.TemporaryDirectory() as scratch:
        os.symlink(Path(readme).resolve().parent / "configs", Path(scratch) / "configs")
        (Path(scratch) / "build").mkdir()
        os.symlink(stylepipe, Path(scratch) / "build" / "stylepipe")
        for step_name in ("Validate configs", "Stylize a clip on the CPU"):
            print(f"--- {step_name}", flush=True)
            # GitHub runs `run:` with bash -e.
            result = subprocess.run(["bash", "-e", "-c", steps[step_name]["run"]], cwd=scratch)
            if result.returncode != 0:
                sys.exit(f"step '{step_name}' of the README's job failed (exit {result.returncode})")
        if not (Path(scratch) / "pencil.mp4").stat().st_size:
            sys.exit("the README's job wrote an empty pencil.mp4")
    print("the README's CI job validates the configs and stylizes a clip")


if __name__ == "__main__":
    main()
