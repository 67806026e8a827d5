#!/usr/bin/env bash
# Segment-parallel throughput on one machine: a CLIP_SECONDS (default 60) 1080p
# H.264 clip with audio through CONFIG (default configs/pencil.yaml) to libx264
# ultrafast, as one run and with --jobs for each of JOBS (default "1 2 4 8"),
# against ffmpeg's own NVDEC + libx264 ultrafast transcode (the peer; software
# decoding where no CUDA device is present). Reports frames/s of wall time and,
# per device, the segments' frames and pool high-water from --stats-json.
# CODEC=ffv1 writes FFV1 in Matroska instead (no peer then); DEVICES goes to
# --devices (all, 0,1, ...); TAG names the result files; KEEP_OUTPUT=1 keeps
# the outputs (TAG_jobsJ.mp4).
# Usage: scripts/segments-bench.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/segments-bench.sh OUTDIR}
mkdir -p "$out"
bin=${STYLEPIPE:-build-gpu/stylepipe}
config=${CONFIG:-configs/pencil.yaml}
codec=${CODEC:-libx264}
tag=${TAG:-$(basename "$config" .yaml)_$codec}
ext=mp4; [ "$codec" = libx264 ] || ext=mkv
codec_flags=(--codec "$codec"); [ "$codec" = libx264 ] && codec_flags+=(--preset ultrafast)
read -r -a extra_flags <<<"${SP_FLAGS:-}"
run_flags=("${codec_flags[@]}" "${extra_flags[@]}")
seconds=${CLIP_SECONDS:-60}
rate=${CLIP_RATE:-60}
clip="$out/segments_in_${seconds}s.mp4"
status=0
scripts/make-bench-clip.sh "$clip" "$seconds" "$rate" || exit 1
frames=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$clip")
hwaccel=(); nvidia-smi >/dev/null 2>&1 && hwaccel=(-hwaccel cuda)
elapsed() { local s e; s=$(date +%s.%N); "$@" >"$out/segments_last.log" 2>&1 || { echo "FAILED: $*" >&2; tail -5 "$out/segments_last.log" >&2; status=1; }; e=$(date +%s.%N); awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b-a}'; }
report() { awk -v n="$frames" -v t="$2" -v name="$1" 'BEGIN{printf "%-34s %6.2f s  %6.0f fps\n", name, t, n/t}' | tee -a "$out/segments.txt"; }

echo "clip: $clip ($frames frames, 1920x1080, $rate fps); config $config; ${run_flags[*]}; devices ${DEVICES:-default}" \
  | tee -a "$out/segments.txt"
# Whatever runs first on a fresh machine pays for reading the libraries from
# disk and for CUDA's compute cache (the halftone chain's first configure
# took 0.9-1.4 s, later ones 0.06 s): a few frames first, untimed, as a
# single run (SP_FLAGS may hold flags that need --jobs).
"$bin" run "$config" -i "$clip" -o "$out/warm_up.$ext" -y --frames 3 "${codec_flags[@]}" --progress none \
  >/dev/null 2>&1 || true
rm -f "$out/warm_up.$ext"
# The peer, and the machine's ceiling as the issue measured it: N ffmpeg
# processes side by side, each on the whole clip (frames/s summed).
peer_sessions() {
  local n=$1 i
  for i in $(seq 1 "$n"); do
    ffmpeg -hide_banner -loglevel error -y "${hwaccel[@]}" -i "$clip" -c:v libx264 -preset ultrafast -c:a copy \
      "$out/segments_ffmpeg_$i.mp4" &
  done
  wait
}
if [ "$codec" = libx264 ] && [ -z "${NO_PEER:-}" ]; then
  for n in ${PEER_SESSIONS:-1}; do
    t=$(elapsed peer_sessions "$n")
    report "ffmpeg ${hwaccel[*]:-(software)} + libx264, ${n}x" "$(awk -v t="$t" -v n="$n" 'BEGIN{printf "%.3f", t/n}')"
  done
  rm -f "$out"/segments_ffmpeg_*.mp4
fi
[ -n "${SKIP_SINGLE:-}" ] || report "stylepipe single run" \
  "$(elapsed "$bin" run "$config" -i "$clip" -o "$out/${tag}_single.$ext" -y "${run_flags[@]}" --progress none \
     --stats-json "$out/${tag}_single.json")"
for jobs in ${JOBS:-1 2 4 8}; do
  result="$out/${tag}_jobs$jobs"
  report "stylepipe --jobs $jobs" \
    "$(elapsed "$bin" run "$config" -i "$clip" -o "$result.$ext" -y "${run_flags[@]}" --progress none \
       --jobs "$jobs" ${DEVICES:+--devices "$DEVICES"} --stats-json "$result.json")"
  python3 - "$result.json" <<'PY' | tee -a "$out/segments.txt"
import json, sys, collections
s = json.load(open(sys.argv[1]))
if "segments" not in s:  # --jobs auto chose one worker: a single run
    print(f"    a single run (one worker): {s['fps']:.0f} fps by its own clock")
    sys.exit(0)
per = collections.defaultdict(lambda: [0, 0])
for seg in s["segments"]:
    st = seg.get("stats") or {}
    d = per[seg.get("device", "default")]
    d[0] += st.get("frames", {}).get("out", 0)
    d[1] = max(d[1], st.get("pool", {}).get("high_water_bytes", 0))
starts = sorted(seg["stats"].get("first_frame_seconds", -1) for seg in s["segments"] if seg.get("stats"))
phases = s.get("phases_seconds", {})
print(f"    by its own clock (--stats-json, the issue's measure): {s['fps']:.0f} fps in {s['wall_seconds']:.2f} s")
print(f"    {len(s['segments'])} segments; phases: plan {phases.get('plan', 0):.2f} s, workers {phases.get('workers', 0):.2f} s, concat {phases.get('concat', 0):.2f} s; "
      f"worker start -> first frame: median {starts[len(starts) // 2]:.2f} s, max {starts[-1]:.2f} s")
print("    " + "; ".join(f"device {k}: {v[0]} frames ({v[0] / s['wall_seconds']:.0f} fps), pool high-water {v[1] / 2**20:.0f} MiB per worker"
                         for k, v in sorted(per.items(), key=lambda kv: str(kv[0]))))
PY
  got=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$result.$ext")
  [ "$got" = "$frames" ] || { echo "--jobs $jobs wrote $got frames, the input has $frames" | tee -a "$out/segments.txt"; status=1; }
  [ -n "${KEEP_OUTPUT:-}" ] || rm -f "$result.$ext"
done
exit $status
