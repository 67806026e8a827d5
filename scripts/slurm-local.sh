#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, for tests and CI.
#
#   scripts/slurm-local.sh start  [STATE_DIR]   # idempotent; prints `export SLURM_CONF=...`
#   scripts/slurm-local.sh stop   [STATE_DIR]   # cancels jobs, stops slurmd, slurmctld, munged
#   scripts/slurm-local.sh status [STATE_DIR]   # exit 0 when up, 3 when not
#   scripts/slurm-local.sh env    [STATE_DIR]   # prints the export line only
#
# STATE_DIR (default /tmp/stylepipe-slurm) holds everything: slurm.conf,
# gres.conf, controller state, slurmd spool, logs, pid files and a munged of its
# own (socket, pid, log, seed), so two clusters in two state dirs do not touch
# each other. Needs root and Debian's slurmctld, slurmd, slurm-client and munge.
#
# Environment:
#   SLURM_LOCAL_PORT     slurmctld port; slurmd uses PORT+1. Default: 6817 if
#                        free, else the next free pair (a running cluster keeps its own).
#   SLURM_LOCAL_TIMEOUT  seconds to wait for the node to come up (default 60).
#   SLURM_LOCAL_GPUS     number of GPUs to declare as GRES (default: count of /dev/nvidiaN; 0 = none).
#   SLURM_LOCAL_STATE    the state dir when none is given.
set -euo pipefail

# The daemons live in /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

die() { echo "slurm-local: $*" >&2; exit 1; }
# die with the last lines of a daemon's log, which say why.
die_log() {
  local log="$1"
  shift
  echo "slurm-local: $*; the end of $log:" >&2
  tail -n 8 "$log" 2>/dev/null | sed 's/^/  /' >&2 || true
  exit 1
}

cmd="${1:-}"
state="${2:-${SLURM_LOCAL_STATE:-/tmp/stylepipe-slurm}}"
case "$cmd" in
  start|stop|status|env) ;;
  *) die "usage: $0 start|stop|status|env [STATE_DIR]" ;;
esac
[[ "$state" = /* ]] || state="$PWD/$state"
[[ -z "${SLURM_LOCAL_PORT:-}" || "${SLURM_LOCAL_PORT}" =~ ^[1-9][0-9]{2,4}$ ]] \
  || die "SLURM_LOCAL_PORT: '$SLURM_LOCAL_PORT' is not a port number"
[[ -z "${SLURM_LOCAL_GPUS:-}" || "${SLURM_LOCAL_GPUS}" =~ ^[0-9]+$ ]] \
  || die "SLURM_LOCAL_GPUS: '$SLURM_LOCAL_GPUS' is not a count"
[[ "${SLURM_LOCAL_TIMEOUT:-60}" =~ ^[1-9][0-9]*$ ]] \
  || die "SLURM_LOCAL_TIMEOUT: '${SLURM_LOCAL_TIMEOUT}' is not a number of seconds"
state="${state%/}"

conf="$state/slurm.conf"
mdir="$state/munge"
msock="$mdir/munge.socket"
mpid="$mdir/munged.pid"
ctld_pidf="$state/run/slurmctld.pid"
slurmd_pidf="$state/run/slurmd.pid"
node="$(hostname -s)"
timeout="${SLURM_LOCAL_TIMEOUT:-60}"

export SLURM_CONF="$conf"

# pid from a pid file, printed only while that process is alive and is the
# expected program ($2, as in /proc/PID/comm).
live_pid() {
  local f="$1" comm="$2" pid
  [[ -s "$f" ]] || return 1
  pid="$(tr -dc '0-9' <"$f")"
  [[ -n "$pid" && -r "/proc/$pid/comm" ]] || return 1
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$comm" ]] || return 1
  echo "$pid"
}

# Kills a process (TERM, then KILL after $3 seconds) and waits for it to go.
stop_pid() {
  local pid="$1" name="$2" grace="${3:-10}" i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < grace * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || { echo "slurm-local: stopped $name (pid $pid)"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  echo "slurm-local: killed $name (pid $pid) after ${grace}s"
}

# slurmstepd processes of this cluster: they inherit SLURM_CONF from our slurmd.
stepd_pids() {
  local p
  for p in /proc/[0-9]*; do
    [[ "$(cat "$p/comm" 2>/dev/null)" == slurmstepd ]] || continue
    tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$conf" && echo "${p#/proc/}"
  done
  return 0
}

port_listening() {  # is TCP port $1 in LISTEN state (v4 or v6)?
  local hex
  hex="$(printf '%04X' "$1")"
  awk -v p=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

munge_ok() { munge -n --socket="$msock" 2>/dev/null | unmunge --socket="$msock" >/dev/null 2>&1; }

node_state() { sinfo -h -n "$node" -o '%T' 2>/dev/null | head -n1; }

print_env() {
  echo "export SLURM_CONF=$conf"
}

start_munge() {
  if live_pid "$mpid" munged >/dev/null && munge_ok; then
    return 0
  fi
  id munge >/dev/null 2>&1 || die "no 'munge' user: apt-get install -y munge"
  command -v munged >/dev/null || die "munged not found: apt-get install -y munge"
  local key=/etc/munge/munge.key
  if [[ ! -s "$key" ]]; then
    install -d -o munge -g munge -m 0700 /etc/munge
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile="$key" --force
    else
      dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
    fi
    echo "slurm-local: created $key"
  fi
  chown munge:munge "$key"
  chmod 0400 "$key"
  # The system paths, for a munged started the usual way; ours uses $mdir.
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  install -d -o munge -g munge -m 0755 "$mdir"
  runuser -u munge -- test -w "$mdir" \
    || die "the munge user cannot write $mdir: make the directories above it searchable (chmod o+x)"
  rm -f "$msock" "$msock.lock" "$mpid"
  runuser -u munge -- munged --socket="$msock" --pid-file="$mpid" \
    --log-file="$mdir/munged.log" --seed-file="$mdir/munged.seed" --key-file="$key" \
    || die "munged failed to start; see $mdir/munged.log"
  local i
  for ((i = 0; i < 50; i++)); do
    munge_ok && return 0
    sleep 0.1
  done
  die "munged does not answer on $msock; see $mdir/munged.log"
}

# Writes slurm.conf (and gres.conf with GPUs) unless the daemons already run.
write_conf() {
  local port="" cpus mem gpus i
  if [[ -n "${SLURM_LOCAL_PORT:-}" ]]; then
    port="$SLURM_LOCAL_PORT"
  elif [[ -s "$conf" ]]; then
    port="$(sed -n 's/^SlurmctldPort=//p' "$conf")"
  fi
  if [[ -z "$port" ]] || port_listening "$port" || port_listening $((port + 1)); then
    [[ -z "${SLURM_LOCAL_PORT:-}" ]] || die "port $port or $((port + 1)) is in use (SLURM_LOCAL_PORT)"
    for ((port = 6817; port < 6917; port += 2)); do
      port_listening "$port" || port_listening $((port + 1)) || break
    done
    ((port < 6917)) || die "no free port pair in 6817-6916"
  fi
  cpus="$(nproc)"
  mem="$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.95 }' /proc/meminfo)"
  if [[ -n "${SLURM_LOCAL_GPUS:-}" ]]; then
    gpus="$SLURM_LOCAL_GPUS"
  else
    gpus=0
    for i in /dev/nvidia[0-9]*; do [[ -e "$i" ]] && gpus=$((gpus + 1)); done
  fi
  local gres_node="" gres_types="# no GPUs: no GRES"
  rm -f "$state/gres.conf"
  if ((gpus > 0)); then
    gres_node=" Gres=gpu:$gpus"
    gres_types="GresTypes=gpu"
    {
      echo "# generated by scripts/slurm-local.sh"
      echo "NodeName=$node Name=gpu File=/dev/nvidia[0-$((gpus - 1))]"
    } >"$state/gres.conf"
  fi
  cat >"$conf" <<EOF
# generated by scripts/slurm-local.sh: a single-node cluster for tests
ClusterName=stylepipe-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$msock
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$ctld_pidf
SlurmdPidFile=$slurmd_pidf
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No systemd and no cgroup delegation here: track processes through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No slurmdbd: dependencies (afterok) still work; sacct does not.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$state/log/jobcomp.txt
SchedulerType=sched/backfill
# Start batch jobs on the next scheduler pass (the default delays them up to 3 s).
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=600
$gres_types
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem$gres_node State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  # No cgroups either. slurmd of Slurm 24.11 (Debian 13) sets up its cgroup
  # plugin whatever the plugins above are, and where /sys/fs/cgroup is not
  # mounted (a chroot, a container) it does not start: "disabled" says no
  # cgroups. Slurm 22.05 (Debian 12) sets none up for these plugins and does
  # not know the value; 24.05 is the oldest release documented with it.
  rm -f "$state/cgroup.conf"
  if slurm_at_least 24 5; then
    printf '# generated by scripts/slurm-local.sh\nCgroupPlugin=disabled\n' >"$state/cgroup.conf"
  fi
}

# Is the installed slurmd release MAJOR.MINOR or later? ("slurm-wlm 24.11.5")
slurm_at_least() {
  local v major minor
  v="$(slurmd -V 2>/dev/null | awk '{ print $NF }')"
  major="${v%%.*}"
  minor="${v#*.}"
  minor="${minor%%.*}"
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
  ((10#$major > $1 || (10#$major == $1 && 10#$minor >= $2)))
}

wait_idle() {
  local deadline=$((SECONDS + timeout)) st resumed=0 since=$SECONDS
  while ((SECONDS < deadline)); do
    st="$(node_state)"
    ((SECONDS - since < 2)) || live_pid "$slurmd_pidf" slurmd >/dev/null \
      || die_log "$state/log/slurmd.log" "slurmd exited"
    case "$st" in
      idle|mixed|allocated|completing) return 0 ;;
      down*|drain*|fail*)
        if ((!resumed)); then
          scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
          resumed=1
        fi ;;
    esac
    sleep 0.5
  done
  die_log "$state/log/slurmd.log" "node $node not idle after ${timeout}s (state: '${st:-no answer}'; see also $state/log/slurmctld.log)"
}

do_start() {
  [[ "$(id -u)" -eq 0 ]] || die "start needs root (daemons run as root, munged as munge)"
  local b
  for b in slurmctld slurmd sinfo scontrol munged; do
    command -v "$b" >/dev/null || die "$b not found: apt-get install -y slurmctld slurmd slurm-client munge"
  done
  install -d -m 0755 "$state" "$state/ctld" "$state/spool" "$state/log" "$state/run"
  local ctld slurmd_pid
  ctld="$(live_pid "$ctld_pidf" slurmctld || true)"
  slurmd_pid="$(live_pid "$slurmd_pidf" slurmd || true)"
  if [[ -z "$ctld" && -z "$slurmd_pid" ]]; then
    write_conf
  elif [[ ! -s "$conf" ]]; then
    die "daemons run (pids $ctld $slurmd_pid) but $conf is gone: stop them first"
  fi
  start_munge
  if [[ -z "$ctld" ]]; then
    slurmctld -f "$conf" >>"$state/log/slurmctld.out" 2>&1 \
      || die "slurmctld failed to start; see $state/log/slurmctld.log"
  fi
  # slurmd only registers with a controller that answers.
  local i
  for ((i = 0; i < timeout * 2; i++)); do
    scontrol ping 2>/dev/null | grep -q 'is UP' && break
    ((i < 4)) || live_pid "$ctld_pidf" slurmctld >/dev/null \
      || die_log "$state/log/slurmctld.log" "slurmctld exited"
    sleep 0.5
  done
  scontrol ping 2>/dev/null | grep -q 'is UP' \
    || die_log "$state/log/slurmctld.log" "slurmctld does not answer after ${timeout}s"
  if [[ -z "$slurmd_pid" ]]; then
    slurmd -f "$conf" -N "$node" >>"$state/log/slurmd.out" 2>&1 \
      || die_log "$state/log/slurmd.log" "slurmd failed to start"
  fi
  wait_idle
  echo "slurm-local: cluster up in $state (node $node, $(sed -n 's/^SlurmctldPort=//p' "$conf")/tcp)"
  print_env
}

do_stop() {
  local ctld slurmd_pid munged_pid p
  ctld="$(live_pid "$ctld_pidf" slurmctld || true)"
  if [[ -n "$ctld" ]] && [[ -s "$conf" ]]; then
    # Cancel every job first so the slurmstepds end their tasks.
    local jobs
    jobs="$(timeout 10 squeue -h -o '%A' 2>/dev/null || true)"
    if [[ -n "$jobs" ]]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $jobs 2>/dev/null || true
      for ((p = 0; p < 100; p++)); do
        [[ -z "$(stepd_pids)" ]] && break
        sleep 0.1
      done
    fi
  fi
  slurmd_pid="$(live_pid "$slurmd_pidf" slurmd || true)"
  [[ -z "$slurmd_pid" ]] || stop_pid "$slurmd_pid" slurmd
  for p in $(stepd_pids); do stop_pid "$p" "slurmstepd" 2; done
  [[ -z "$ctld" ]] || stop_pid "$ctld" slurmctld
  munged_pid="$(live_pid "$mpid" munged || true)"
  [[ -z "$munged_pid" ]] || stop_pid "$munged_pid" munged
  rm -f "$msock" "$msock.lock"
  echo "slurm-local: stopped ($state)"
}

do_status() {
  local ctld slurmd_pid munged_pid up=1
  ctld="$(live_pid "$ctld_pidf" slurmctld || true)"
  slurmd_pid="$(live_pid "$slurmd_pidf" slurmd || true)"
  munged_pid="$(live_pid "$mpid" munged || true)"
  echo "state dir: $state"
  echo "munged:    ${munged_pid:-not running}"
  echo "slurmctld: ${ctld:-not running}"
  echo "slurmd:    ${slurmd_pid:-not running}"
  [[ -n "$ctld" && -n "$slurmd_pid" && -n "$munged_pid" ]] || up=0
  if ((up)); then
    echo "node:      $node $(node_state)"
    squeue -o '%.12i %.10P %.20j %.8T %.10M %R' 2>/dev/null || true
    print_env
    return 0
  fi
  return 3
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  env) print_env ;;
esac
