#!/usr/bin/env bash
# xbr's measurements on a GPU machine (issue: xBR): bench at the sizes the
# targets name, the live pipe at 60 fps for SECONDS (default 60), and
# stylepipe against `ffmpeg -vf xbr=4` on the same clip.
# Usage: scripts/xbr-check.sh OUTDIR   (STYLEPIPE=path/to/stylepipe)
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/xbr-check.sh OUTDIR}")
mkdir -p "$out"
bin=${STYLEPIPE:-build-gpu/stylepipe}
seconds=${SECONDS_LIVE:-60}

echo "=== bench ==="
for run in "xbr4 256x240" "xbr2 1920x1080" "xbr4 1920x1080"; do
  set -- $run
  "$bin" bench --config "configs/bench/$1.yaml" --size "$2" --frames 500 --warmup 50 \
    --json "$out/bench_$1_$2.json" >"$out/bench_$1_$2.txt" 2>&1
  grep -E "^xbr|chain" "$out/bench_$1_$2.txt" | sed "s/^/[$1 $2] /"
done

echo "=== live: 256x240 -> 4x, raw RGBA through pipes, paced at 60 fps by ffmpeg -re, ${seconds} s ==="
printf 'pipeline:\n  - xbr: {scale: 4}\n' >"$out/live.yaml"
ffmpeg -v error -re -f lavfi -i "testsrc2=size=64x60:rate=60" -t "$seconds" -vf scale=256:240:flags=neighbor \
  -f rawvideo -pix_fmt rgba - |
  "$bin" run "$out/live.yaml" -f rawvideo --pix-fmt rgba --size 256x240 --rate 60 -i - \
    -f rawvideo --pix-fmt rgba -o - --low-latency --progress none --stats-json "$out/live_stats.json" |
  dd bs=16M of=/dev/null status=none  # a consumer that takes what the pipe holds in one read, as a player would
python3 - "$out/live_stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
l = s["latency_ms"]
print(f"frames in {s['frames']['in']} out {s['frames']['out']} dropped {s['frames']['dropped']}; "
      f"latency p50 {l['p50']:.2f} ms p99 {l['p99']:.2f} ms max {l['max']:.2f} ms")
steps = {k: v["p50"] for k, v in s["steps_ms"].items()}
steps.update({st["name"]: st["ms"]["p50"] for st in s["stages"]})
print("GPU steps p50 (ms):", ", ".join(f"{k} {v:.3f}" for k, v in sorted(steps.items())))
PY

echo "=== side by side: 480x270 30 fps 10 s H.264 -> xbr 4x -> libx264 ultrafast ==="
clip="$out/xbr_in.mp4"
ffmpeg -v error -y -f lavfi -i "testsrc2=size=120x68:rate=30" -t 10 -vf scale=480:270:flags=neighbor \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$clip"
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || echo "FAILED: $*"; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
ff=$(t ffmpeg -y -i "$clip" -vf xbr=4 -c:v libx264 -preset ultrafast -crf 18 "$out/xbr_ffmpeg.mp4")
sp=$(t "$bin" run configs/bench/xbr4.yaml -i "$clip" -o "$out/xbr_stylepipe.mp4" -y --codec libx264 --preset ultrafast \
  --crf 18 --progress none)
awk -v f="$ff" -v s="$sp" 'BEGIN { printf "ffmpeg -vf xbr=4: %d ms (%.0f fps); stylepipe: %d ms (%.0f fps); speedup %.2fx\n", f, 300000/f, s, 300000/s, f/s }'
