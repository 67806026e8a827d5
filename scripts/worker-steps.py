#!/usr/bin/env python3
"""A --jobs run's worker start-up steps: for each --stats-json given, the
median over its segments of each step, in seconds after the worker's run
started (the segments' startup_seconds), slowest last.
Usage: scripts/worker-steps.py STATS.json..."""
import collections
import json
import statistics
import sys

for path in sys.argv[1:]:
    steps = collections.defaultdict(list)
    for seg in json.load(open(path)).get("segments", []):  # none: a single run
        st = (seg.get("stats") or {}).get("startup_seconds", [])
        t0 = next((x["seconds"] for x in st if x["step"].startswith("run started")), None)
        for x in st:
            if t0 is not None and not x["step"].startswith("libraries"):
                steps[x["step"]].append(x["seconds"] - t0)
    order = sorted(steps, key=lambda k: statistics.median(steps[k]))
    print(path.rsplit("/", 1)[-1] + ": " + "; ".join("%s %.3f" % (k, statistics.median(steps[k])) for k in order))
