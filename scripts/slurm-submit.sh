#!/usr/bin/env bash
# Segment-parallel stylepipe on Slurm: plan, one array task per segment, then
# a concat job that runs only when every task succeeded (afterok).
#
#   scripts/slurm-submit.sh CONFIG -i IN -o OUT (--segments N | --segment-seconds S)
#       [--workdir DIR] [other `stylepipe plan` flags: -y --codec --crf --backend ...]
#       [--gpus-per-task N] [--wait] [-- extra sbatch args]
#   scripts/slurm-submit.sh --manifest M [--gpus-per-task N] [--wait] [-- extra sbatch args]
#
# The second form plans nothing: it submits the array and the concat again for
# an existing plan. Finished segments are skipped by the workers, so this is
# how a run with failed or killed tasks is completed.
#
# Logs and the two job scripts go into WORKDIR/slurm/. The binary is $STYLEPIPE,
# else `stylepipe` on PATH, else build/stylepipe of this checkout; it and the
# work dir must be reachable at the same paths on the compute nodes. Workers
# log at $STYLEPIPE_LOG_LEVEL (default debug: its lines carry milliseconds).
# Extra sbatch args (after --) go to both jobs. --wait blocks until the
# concat job ends and exits with its status.
set -euo pipefail

die() { echo "slurm-submit: $*" >&2; exit 1; }
usage() { sed -n '2,19s/^# \{0,1\}//p' "$0" >&2; exit 64; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
plan_args=()
sbatch_extra=()
manifest=""
gpus=""
wait_end=0

while (($#)); do
  case "$1" in
    --) shift; sbatch_extra=("$@"); break ;;
    --gpus-per-task) (($# >= 2)) || die "--gpus-per-task needs a number"; gpus="$2"; shift 2 ;;
    --gpus-per-task=*) gpus="${1#*=}"; shift ;;
    --manifest) (($# >= 2)) || die "--manifest needs a path"; manifest="$2"; shift 2 ;;
    --manifest=*) manifest="${1#*=}"; shift ;;
    --wait) wait_end=1; shift ;;
    -h|--help) usage ;;
    *) plan_args+=("$1"); shift ;;
  esac
done
[[ -z "$gpus" || "$gpus" =~ ^[1-9][0-9]*$ ]] || die "--gpus-per-task: '$gpus' is not a positive number"
if [[ -n "$manifest" ]]; then
  ((${#plan_args[@]} == 0)) || die "--manifest does not combine with plan arguments (${plan_args[*]})"
else
  ((${#plan_args[@]})) || usage
fi

if [[ -n "${STYLEPIPE:-}" ]]; then
  bin="$STYLEPIPE"
elif command -v stylepipe >/dev/null; then
  bin="$(command -v stylepipe)"
else
  bin="$repo/build/stylepipe"
fi
[[ "$bin" == */* ]] || bin="$(command -v "$bin" || true)"
[[ -x "$bin" ]] || die "no stylepipe binary at '${bin}' (set STYLEPIPE or build it)"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
command -v sbatch >/dev/null || die "sbatch not found (apt-get install -y slurm-client)"

if [[ -z "$manifest" ]]; then
  plan_out="$("$bin" plan "${plan_args[@]}")" || die "stylepipe plan failed (exit $?)"
  printf '%s\n' "$plan_out"
  manifest="$(sed -n 's/^manifest: //p' <<<"$plan_out" | head -n1)"
  [[ -n "$manifest" ]] || die "stylepipe plan printed no 'manifest: PATH' line"
fi
[[ -f "$manifest" ]] || die "$manifest: no such manifest"
manifest="$(cd "$(dirname "$manifest")" && pwd)/$(basename "$manifest")"
workdir="$(dirname "$manifest")"
# The segment count: plan's `segments: N` line, else the manifest's entries
# (written one key a line; the config text in it is an escaped string).
if [[ -n "${plan_out:-}" ]]; then
  segments="$(sed -n 's/^segments: //p' <<<"$plan_out" | head -n1)"
else
  segments="$(grep -o '"index":' "$manifest" | wc -l)"
fi
[[ "$segments" =~ ^[1-9][0-9]*$ ]] || die "$manifest: cannot count its segments"

logs="$workdir/slurm"
mkdir -p "$logs"
# The job scripts are kept next to the logs, so that one task can be rerun by hand:
#   sbatch --array=K WORKDIR/slurm/task.sh
{
  echo '#!/usr/bin/env bash'
  echo '#SBATCH --job-name=stylepipe-segment'
  echo "#SBATCH --output=$logs/task-%A_%a.log"
  echo "#SBATCH --chdir=$workdir"
  echo 'set -euo pipefail'
  # shellcheck disable=SC2016 # expanded when the job runs
  echo 'echo "task-start: $(date +%s.%N) index=${SLURM_ARRAY_TASK_ID:-?} job=${SLURM_JOB_ID:-?} host=$(hostname -s) gpus=${CUDA_VISIBLE_DEVICES:-none}"'
  echo '# Debug lines carry milliseconds since start-up: the first frame is read from them.'
  printf 'exec %q --log-level %q run --manifest %q\n' "$bin" "${STYLEPIPE_LOG_LEVEL:-debug}" "$manifest"
} >"$logs/task.sh"
{
  echo '#!/usr/bin/env bash'
  echo '#SBATCH --job-name=stylepipe-concat'
  echo "#SBATCH --output=$logs/concat-%j.log"
  echo "#SBATCH --chdir=$workdir"
  echo 'set -euo pipefail'
  # shellcheck disable=SC2016
  echo 'echo "concat-start: $(date +%s.%N) job=${SLURM_JOB_ID:-?} host=$(hostname -s)"'
  printf 'exec %q concat %q\n' "$bin" "$manifest"
} >"$logs/concat.sh"
chmod +x "$logs/task.sh" "$logs/concat.sh"

gpu_args=()
# Slurm refuses --gpus-per-task without a task count; each array task is one task.
[[ -z "$gpus" ]] || gpu_args=(--ntasks=1 "--gpus-per-task=$gpus")
date +%s.%N >"$logs/submit-time"
array_id="$(sbatch --parsable --array="0-$((segments - 1))" "${gpu_args[@]}" "${sbatch_extra[@]}" "$logs/task.sh")" \
  || die "sbatch of the array job failed"
array_id="${array_id%%;*}"
concat_id="$(sbatch --parsable --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
  "${sbatch_extra[@]}" "$logs/concat.sh")" \
  || die "sbatch of the concat job failed (array job $array_id is queued: scancel $array_id)"
concat_id="${concat_id%%;*}"
echo "$array_id" >"$logs/array-job-id"
echo "$concat_id" >"$logs/concat-job-id"

echo "array job: $array_id ($segments tasks)"
echo "concat job: $concat_id (afterok:$array_id)"
echo "logs: $logs/task-${array_id}_*.log $logs/concat-$concat_id.log"

((wait_end)) || exit 0

# Polls the controller: sbatch --wait would hide the job ids until the end.
job_field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<"$2"; }
while :; do
  info="$(scontrol -o show job "$concat_id" 2>/dev/null)" \
    || die "concat job $concat_id is no longer known to slurmctld; see $logs"
  state="$(job_field JobState "$info")"
  case "$state" in
    PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|SIGNALING|STAGE_OUT) sleep 1 ;;
    *) break ;;
  esac
done
code="$(job_field ExitCode "$info")"
code="${code%%:*}"
if [[ "$state" == COMPLETED ]]; then
  echo "concat job $concat_id: COMPLETED"
  exit 0
fi
reason="$(job_field Reason "$info")"
echo "slurm-submit: concat job $concat_id ended $state (exit ${code:-?}, reason ${reason:-none}); array tasks:" >&2
scontrol -o show job "$array_id" 2>/dev/null \
  | sed -n 's/.*ArrayTaskId=\([^[:space:]]*\).*JobState=\([^[:space:]]*\).*ExitCode=\([^[:space:]]*\).*/  task \1: \2 exit \3/p' >&2 \
  || true
[[ "$code" =~ ^[0-9]+$ ]] && ((code != 0)) && exit "$code"
exit 1
