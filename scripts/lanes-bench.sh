#!/usr/bin/env bash
# Device-resident fps with 1, 3 and 4 frames in flight (stage lanes) for the
# chains issue 15 names. Usage: scripts/lanes-bench.sh OUTDIR [STYLEPIPE]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/lanes-bench.sh OUTDIR [STYLEPIPE]}
bin=${2:-build-gpu-dev/stylepipe}
mkdir -p "$out"
cases=("xbr4 256x240" "lowpoly 640x360" "lowpoly 1920x1080" "pencil 640x360" "chain3 1920x1080")
for c in "${cases[@]}"; do
  read -r config size <<<"$c"
  line="$config $size:"
  for k in 1 3 4; do
    json="$out/lanes_${config}_${size}_$k.json"
    "$bin" bench --config "configs/bench/$config.yaml" --size "$size" --frames-in-flight "$k" --frames 300 \
      --json "$json" >/dev/null 2>"$out/lanes_last.log" || { echo "FAILED: $config $size k=$k"; tail -3 "$out/lanes_last.log"; continue; }
    line+=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['device_resident']; print(f\"  k={d['frames_in_flight']}: {d['device_fps']:.0f} fps (+{d['extra_lane_bytes']/2**20:.0f} MiB)\", end='')" "$json")
  done
  echo "$line" | tee -a "$out/lanes.txt"
done
