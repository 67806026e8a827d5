#!/usr/bin/env bash
# Where a worker's start goes, on one GPU (issue 29): a 10 s clip through
# CONFIG (default: the GPU-bound halftone chain) as one run with the debug log
# (each stage's configure steps, the run's start-up steps), then CLIP_SECONDS
# (default 40) as one run and with --jobs for each of JOBS (default "1 2 4")
# on GPU 0, with each run's worker start-up steps. libx264 ultrafast.
# Usage: scripts/worker-start-bench.sh OUTDIR   (STYLEPIPE: the binary, default build-gpu/stylepipe)
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/worker-start-bench.sh OUTDIR}")
mkdir -p "$out"
. scripts/devkit-env.sh
bin=${STYLEPIPE:-$PWD/build-gpu/stylepipe}
config=${CONFIG:-configs/bench/halftone_gpu_bound.yaml}
tag=$(basename "$config" .yaml)
status=0
scripts/make-bench-clip.sh "$out/clip10.mp4" 10 60 || exit 1
"$bin" run "$config" -i "$out/clip10.mp4" -o "$out/${tag}_10s.mp4" -y --codec libx264 --preset ultrafast \
  --progress none --log-level debug --stats-json "$out/${tag}_10s.json" 2>"$out/${tag}_10s_debug.log" || status=1
echo "== $tag, 10 s, one run: configure steps (debug log)"
grep -E "configure|stages configured" "$out/${tag}_10s_debug.log" | cut -c1-300
python3 - "$out/${tag}_10s.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("start-up steps: " + "; ".join("%s %.3f" % (x["step"], x["seconds"]) for x in s["startup_seconds"]))
print("fps %.1f, wall %.2f s, frames %s" % (s["fps"], s["wall_seconds"], s["frames"]))
PY
echo "== $tag, ${CLIP_SECONDS:-40} s: one run and --jobs ${JOBS:-1 2 4} on GPU 0"
CONFIG=$config CLIP_SECONDS=${CLIP_SECONDS:-40} NO_PEER=1 JOBS="${JOBS:-1 2 4}" DEVICES=0 TAG="$tag" STYLEPIPE=$bin \
  scripts/segments-bench.sh "$out/bench" | grep -v "^clip:" || status=1
scripts/worker-steps.py "$out/bench/${tag}"_jobs*.json
rm -f "$out"/*.mp4 "$out"/bench/*.mp4
exit $status
