#!/usr/bin/env bash
# Segment-parallel throughput on one machine: a CLIP_SECONDS (default 60) 1080p
# H.264 clip with audio through CONFIG (default configs/pencil.yaml) to libx264
# ultrafast, as one run and with --jobs for each of JOBS (default "1 2 4 8"),
# against ffmpeg's own NVDEC + libx264 ultrafast transcode (the peer; software
# decoding where no CUDA device is present). Reports frames/s of wall time.
# Usage: scripts/segments-bench.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/segments-bench.sh OUTDIR}
mkdir -p "$out"
bin=${STYLEPIPE:-build-gpu/stylepipe}
config=${CONFIG:-configs/pencil.yaml}
seconds=${CLIP_SECONDS:-60}
rate=${CLIP_RATE:-60}
clip="$out/segments_in_${seconds}s.mp4"
status=0
if [ ! -e "$clip" ]; then
  # Moving pattern plus film grain, so the encoders get real work; 10 s made
  # (the grain filter is single-threaded), then repeated by stream copy.
  part="$out/segments_part.mp4"
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=1920x1080:rate=$rate" \
    -f lavfi -i sine=frequency=440:sample_rate=48000 -t 10 -vf "noise=alls=6:allf=t" \
    -c:v libx264 -preset veryfast -g $((rate * 2)) -pix_fmt yuv420p -c:a aac "$part" || exit 1
  ffmpeg -hide_banner -loglevel error -y -stream_loop $(( (seconds + 9) / 10 - 1 )) -i "$part" -t "$seconds" -c copy "$clip" || exit 1
fi
frames=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$clip")
hwaccel=(); nvidia-smi >/dev/null 2>&1 && hwaccel=(-hwaccel cuda)
elapsed() { local s e; s=$(date +%s.%N); "$@" >"$out/segments_last.log" 2>&1 || { echo "FAILED: $*" >&2; tail -5 "$out/segments_last.log" >&2; status=1; }; e=$(date +%s.%N); awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b-a}'; }
report() { awk -v n="$frames" -v t="$2" -v name="$1" 'BEGIN{printf "%-34s %6.2f s  %6.0f fps\n", name, t, n/t}' | tee -a "$out/segments.txt"; }

: >"$out/segments.txt"
echo "clip: $clip ($frames frames, 1920x1080, $rate fps); config $config; libx264 ultrafast" | tee -a "$out/segments.txt"
report "ffmpeg ${hwaccel[*]:-(software)} + libx264" \
  "$(elapsed ffmpeg -hide_banner -y "${hwaccel[@]}" -i "$clip" -c:v libx264 -preset ultrafast -c:a copy "$out/segments_ffmpeg.mp4")"
report "stylepipe single run" \
  "$(elapsed "$bin" run "$config" -i "$clip" -o "$out/segments_single.mp4" -y --preset ultrafast --progress none \
     --stats-json "$out/segments_single.json")"
for jobs in ${JOBS:-1 2 4 8}; do
  report "stylepipe --jobs $jobs" \
    "$(elapsed "$bin" run "$config" -i "$clip" -o "$out/segments_jobs$jobs.mp4" -y --preset ultrafast --progress none \
       --jobs "$jobs" ${DEVICES:+--devices "$DEVICES"} --stats-json "$out/segments_jobs$jobs.json")"
  got=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$out/segments_jobs$jobs.mp4")
  [ "$got" = "$frames" ] || { echo "--jobs $jobs wrote $got frames, the input has $frames" | tee -a "$out/segments.txt"; status=1; }
done
exit $status
