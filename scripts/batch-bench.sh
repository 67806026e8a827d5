#!/usr/bin/env bash
# A folder of short clips against one long clip of the same frames (issue 29:
# "200 clips of 2 s in one command: at least 0.8 of the fps of one 400 s clip").
# One CLIPS x CLIP_SECONDS clip (moving pattern + tone, a keyframe every
# CLIP_SECONDS) is made, then cut into CLIPS clips by stream copy; then
# `stylepipe run` of the long clip with --jobs JOBS (segments) and of the
# clips as a batch with --jobs JOBS, both to libx264 ultrafast. Reports fps
# of wall time and their ratio.
# CLIPS (200), CLIP_SECONDS (2), SIZE (1280x720), RATE (30), CONFIG
# (configs/pencil.yaml), JOBS (4), DEVICES (for --devices), STYLEPIPE (binary),
# EXTRA_ARGS (more options for both runs, e.g. "--hwdec none").
# Usage: scripts/batch-bench.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: scripts/batch-bench.sh OUTDIR}")
clips=${CLIPS:-200} seconds=${CLIP_SECONDS:-2} size=${SIZE:-1280x720} rate=${RATE:-30}
config=${CONFIG:-configs/pencil.yaml} jobs=${JOBS:-4} bin=${STYLEPIPE:-build/stylepipe}
mkdir -p "$out/clips" "$out/styled"
long="$out/long.mp4"
if [ ! -e "$long" ]; then
  ffmpeg -hide_banner -v error -y -f lavfi -i "testsrc2=size=$size:rate=$rate" -f lavfi -i sine=frequency=440 \
    -t $((clips * seconds)) -c:v libx264 -preset veryfast -g $((seconds * rate)) -keyint_min $((seconds * rate)) \
    -pix_fmt yuv420p -c:a aac "$long"
  # Cut by stream copy at the keyframes, one clip a call (the GPU machine's
  # FFmpeg has no segment muxer), several calls at a time.
  for ((k = 0; k < clips; ++k)); do printf '%d\n' "$k"; done |
    xargs -P "$(nproc)" -I{} sh -c 'ffmpeg -hide_banner -v error -y -ss $(({} * '"$seconds"')) -i "$1" -t '"$seconds"' -frames:v '"$((seconds * rate))"' \
      -c copy -avoid_negative_ts make_zero "$2/clip_$(printf %04d {}).mp4"' sh "$long" "$out/clips"
fi
frames=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$long")
devices=(); [ -n "${DEVICES:-}" ] && devices=(--devices "$DEVICES")
read -r -a extra <<<"${EXTRA_ARGS:-}"
timed() { local s e; s=$(date +%s.%N); "$@" --progress none -y --codec libx264 --preset ultrafast "${devices[@]}" "${extra[@]}" \
  >"$out/last.log" 2>&1 || { tail -5 "$out/last.log" >&2; exit 1; }; e=$(date +%s.%N); awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b-a}'; }
one=$(timed "$bin" run "$config" -i "$long" -o "$out/long_styled.mp4" --jobs "$jobs")
many=$(timed "$bin" run "$config" -i "$out/clips/clip_*.mp4" -o "$out/styled/{stem}.mp4" --jobs "$jobs" \
  --stats-json "$out/batch.json")
n=$(ls "$out/clips" | wc -l)
awk -v f="$frames" -v a="$one" -v b="$many" -v n="$n" -v s="$seconds" -v j="$jobs" -v size="$size" 'BEGIN{
  printf "%d frames (%s): one %d s clip --jobs %d: %.2f s, %.0f fps; %d clips of %d s, --jobs %d: %.2f s, %.0f fps; ratio %.2f\n",
    f, size, n * s, j, a, f / a, n, s, j, b, f / b, a / b }'
# Where a clip's time goes: per-step medians over the clips, in seconds from
# the clip's run start, and the clip's whole time (open to output closed).
python3 - "$out/batch.json" <<'PY'
import json, statistics, sys
inputs = json.load(open(sys.argv[1]))["inputs"]
steps = {}
for clip in inputs:
    marks = clip["stats"].get("startup_seconds", [])
    origin = next((m["seconds"] for m in marks if m["step"].startswith("run started")), None)
    for m in marks:
        if origin is not None and m["seconds"] >= origin:
            steps.setdefault(m["step"], []).append(m["seconds"] - origin)
print("a clip's steps (median over %d clips, s from its start): %s; whole clip %.3f s (max %.3f)" % (
    len(inputs), "; ".join("%s %.3f" % (k, statistics.median(v)) for k, v in steps.items()),
    statistics.median(c["seconds"] for c in inputs), max(c["seconds"] for c in inputs)))
print("decoders kept from the worker's previous clip: %d of %d; stage chains kept: %d" % (
    sum(bool(c["stats"]["decoder"].get("kept")) for c in inputs), len(inputs),
    sum(str(c["stats"].get("stage_chain", "")).startswith("kept") for c in inputs)))
PY
rm -rf "$out/styled" "$out/long_styled.mp4"
