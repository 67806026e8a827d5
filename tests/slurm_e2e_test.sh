#!/usr/bin/env bash
# A real Slurm array job end to end, on a single-node cluster started here:
#   1. scripts/slurm-submit.sh: plan, 3 array tasks, afterok concat; the output
#      has the input's frames, frame times and audio packets, byte for byte.
#   2. A task killed mid-segment (SIGXFSZ from `ulimit -f`, as abrupt as kill -9):
#      concat refuses and names the segment; that one index is rerun through
#      `sbatch --array=K`; concat then succeeds.
# Prints the Slurm overhead per task (submission -> task start -> first frame).
#
#   tests/slurm_e2e_test.sh STYLEPIPE_BINARY SOURCE_DIR
#
# Exits 77 (skipped) when not root or when Slurm/munge are not installed
# (scripts/install-deps.sh installs them). KEEP_TMP=1 keeps the work dir.
set -euo pipefail

# The daemons live in /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

skip() { echo "slurm_e2e: SKIP: $*"; exit 77; }
fail() { echo "slurm_e2e: FAIL: $*" >&2; exit 1; }
note() { echo "slurm_e2e: $*"; }

(($# == 2)) || fail "usage: $0 STYLEPIPE_BINARY SOURCE_DIR"
bin="$1"
src="$2"
[[ -x "$bin" ]] || fail "$bin: no such executable"
[[ "$(id -u)" -eq 0 ]] || skip "needs root to start slurmctld, slurmd and munged"
for b in slurmctld slurmd munged sbatch scontrol; do
  command -v "$b" >/dev/null || skip "$b is not installed (scripts/install-deps.sh installs slurmctld slurmd slurm-client munge)"
done
for b in ffmpeg ffprobe; do command -v "$b" >/dev/null || fail "$b is not installed"; done

tmp="$(mktemp -d /tmp/stylepipe-slurm-e2e.XXXXXX)"
chmod 755 "$tmp"  # munged runs as the munge user and keeps its socket under here
state="$tmp/cluster"
cleanup() {
  local rc=$?
  if ((rc != 0 && rc != 77)); then
    local f
    for f in "$state/log/slurmctld.log" "$state/log/slurmd.log" "$tmp"/run*/slurm/*.log "$tmp"/run2/*.log; do
      [[ -f "$f" ]] || continue
      echo "----- $f (last 20 lines)"
      tail -n 20 "$f"
    done
  fi
  "$src/scripts/slurm-local.sh" stop "$state" >/dev/null 2>&1 || echo "slurm_e2e: warning: stopping the cluster failed" >&2
  if [[ "${KEEP_TMP:-0}" == 1 ]]; then echo "slurm_e2e: kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$SECONDS
SLURM_LOCAL_TIMEOUT=60 "$src/scripts/slurm-local.sh" start "$state"
export SLURM_CONF="$state/slurm.conf"
export STYLEPIPE="$bin"

in="$tmp/in.mkv"
ffmpeg -hide_banner -v error -f lavfi -i testsrc2=size=320x240:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 \
  -t 6 -g 25 -c:v libx264 -pix_fmt yuv420p -c:a aac "$in" || fail "ffmpeg could not make the test clip"

# One time a line (a frame with side data adds a comma and an empty line).
frame_times() {
  ffprobe -v error -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 "$1" | awk -F, '$1 != "" { print $1 }'
}
# framemd5's sixth field is the md5 of the packet data; side data, where a
# packet has any (FFmpeg 7: a first AAC packet's skip_samples), follows it.
audio_hashes() { ffmpeg -v error -i "$1" -map 0:a -c copy -f framemd5 - | grep -v '^#' | awk -F, '{ print $6 }'; }
frames_read() { ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$1"; }

frame_times "$in" >"$tmp/in.times"
audio_hashes "$in" >"$tmp/in.audio"
in_frames="$(frames_read "$in")"
[[ "$in_frames" == 150 ]] || fail "the test clip has $in_frames frames, not 150"
(($(wc -l <"$tmp/in.audio") > 100)) || fail "the test clip has too few audio packets"

# The output has the input's frame count, frame times (to 1 ms) and audio packets.
check_output() {
  local out="$1" what="$2" n
  [[ -s "$out" ]] || fail "$what: no output at $out"
  n="$(frames_read "$out")"
  [[ "$n" == "$in_frames" ]] || fail "$what: $n video frames, the input has $in_frames"
  frame_times "$out" >"$out.times"
  paste -d' ' "$tmp/in.times" "$out.times" | awk -v what="$what" '
    { if ($1 == "" || $2 == "" || ($1 - $2) > 0.001 || ($2 - $1) > 0.001) {
        printf "slurm_e2e: FAIL: %s: frame %d at %s s, the input has it at %s s\n", what, NR - 1, $2, $1 > "/dev/stderr"; exit 1 } }' \
    || exit 1
  [[ "$(wc -l <"$out.times")" == "$(wc -l <"$tmp/in.times")" ]] || fail "$what: frame time counts differ"
  audio_hashes "$out" >"$out.audio"
  cmp -s "$tmp/in.audio" "$out.audio" \
    || fail "$what: audio packets differ from the input's ($(wc -l <"$out.audio") vs $(wc -l <"$tmp/in.audio") packets)"
  note "$what: $n frames, frame times and $(wc -l <"$out.audio") audio packets match the input"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- 1. the whole run through scripts/slurm-submit.sh -----------------------
run1="$tmp/run1"
out1="$tmp/out1.mkv"
"$src/scripts/slurm-submit.sh" "$src/configs/identity.yaml" -i "$in" -o "$out1" --segments 3 --backend cpu \
  --workdir "$run1" --wait | tee "$tmp/submit1.txt" || fail "the Slurm run did not complete"
array1="$(cat "$run1/slurm/array-job-id")"
check_output "$out1" "array job $array1 + concat"

# Overhead: submit-time is taken just before sbatch; each task logs its start,
# and the worker's debug lines carry milliseconds since its own start.
submitted="$(cat "$run1/slurm/submit-time")"
: >"$tmp/queue.s"
: >"$tmp/first.s"
tasks=0
for log in "$run1/slurm/task-${array1}"_*.log; do
  start="$(sed -n 's/^task-start: \([0-9.]*\) .*/\1/p' "$log" | head -n1)"
  [[ -n "$start" ]] || fail "$log: no task-start line"
  awk -v a="$start" -v b="$submitted" 'BEGIN { printf "%.6f\n", a - b }' >>"$tmp/queue.s"
  ms="$(sed -n 's/^stylepipe: \[ *\([0-9.]*\) ms\] first frame decoded.*/\1/p' "$log" | head -n1)"
  [[ -z "$ms" ]] || awk -v ms="$ms" 'BEGIN { printf "%.6f\n", ms / 1000 }' >>"$tmp/first.s"
  tasks=$((tasks + 1))
done
((tasks == 3)) || fail "found $tasks task logs of array job $array1, expected 3"
overhead="slurm overhead: submit->task start $(median <"$tmp/queue.s") s, task start->first frame $(median <"$tmp/first.s") s ($tasks tasks, median)"

# ---- 2. a task killed mid-way, concat refuses, one index rerun --------------
run2="$tmp/run2"
out2="$tmp/out2.mkv"
"$bin" plan "$src/configs/identity.yaml" -i "$in" -o "$out2" --segments 3 --backend cpu --workdir "$run2" \
  >"$tmp/plan2.txt" || fail "stylepipe plan failed: $(cat "$tmp/plan2.txt")"
manifest2="$(sed -n 's/^manifest: //p' "$tmp/plan2.txt")"
[[ -f "$manifest2" ]] || fail "stylepipe plan printed no manifest path: $(cat "$tmp/plan2.txt")"
victim=1
seg_file_of() { sed -n 's/^ *"file": "\(.*\)",\{0,1\}$/\1/p' "$1" | sed -n "$(($2 + 1))p"; }
seg_file="$(seg_file_of "$manifest2" "$victim")"
[[ -n "$seg_file" ]] || fail "$manifest2: no file for segment $victim"
# The victim's file may grow to a quarter of what the same segment took in run 1
# (if concat left it there), else of a third of the input.
done_file="$run1/$(seg_file_of "$run1/manifest.json" "$victim")"
if [[ -f "$done_file" ]]; then done_bytes="$(stat -c %s "$done_file")"; else done_bytes=$(($(stat -c %s "$in") / 3)); fi
limit_kib=$((done_bytes / 4 / 1024))
((limit_kib >= 4)) || fail "segment $victim is only about $done_bytes bytes: too small to cut mid-way"
cat >"$run2/task.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
ulimit -c 0
if [[ "\$SLURM_ARRAY_TASK_ID" == "$victim" && "\${KILL_MIDWAY:-0}" == 1 ]]; then
  ulimit -f $limit_kib  # SIGXFSZ at $limit_kib KiB of the segment: killed mid-way, nothing cleaned up
fi
exec $(printf '%q' "$bin") run --manifest $(printf '%q' "$manifest2")
EOF
chmod +x "$run2/task.sh"
if KILL_MIDWAY=1 sbatch --parsable --wait --array=0-2 --output="$run2/task-%A_%a.log" "$run2/task.sh" >"$tmp/array2.id"; then
  fail "the array with a killed task reported success"
fi
array2="$(cut -d';' -f1 "$tmp/array2.id")"
victim_state="$(scontrol -o show job "$array2" | sed -n "s/.*ArrayTaskId=$victim .*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\).*/\1 \2/p")"
[[ "$victim_state" == "FAILED 0:25" ]] || fail "task $victim of array $array2 ended '$victim_state', expected FAILED by signal 25 (SIGXFSZ)"
[[ ! -e "$run2/$seg_file" ]] || fail "the killed task left a finished segment $run2/$seg_file"
note "array job $array2: task $victim killed mid-way at $limit_kib KiB (FAILED, signal 25)"

if "$bin" concat "$manifest2" >"$tmp/concat-refused.txt" 2>&1; then
  fail "concat succeeded with segment $victim missing"
fi
grep -Eq "segment #?$victim\b|$(basename "$seg_file")" "$tmp/concat-refused.txt" \
  || fail "concat refused without naming segment $victim: $(cat "$tmp/concat-refused.txt")"
[[ ! -e "$out2" ]] || fail "the refused concat still wrote $out2"
note "concat refused: $(head -n1 "$tmp/concat-refused.txt")"

rerun="$(sbatch --parsable --wait --array="$victim" --output="$run2/rerun-%A_%a.log" "$run2/task.sh")" \
  || fail "rerunning task $victim failed: $(cat "$run2"/rerun-*.log)"
[[ -s "$run2/$seg_file" ]] || fail "the rerun (job ${rerun%%;*}) left no segment $run2/$seg_file"
"$bin" concat "$manifest2" >"$tmp/concat2.txt" 2>&1 || fail "concat after the rerun failed: $(cat "$tmp/concat2.txt")"
check_output "$out2" "killed task $victim rerun (job ${rerun%%;*}) + concat"

echo "$overhead"
note "passed in $((SECONDS - t0)) s"
