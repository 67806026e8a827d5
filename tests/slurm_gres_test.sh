#!/usr/bin/env bash
# GPUs as Slurm GRES, without GPUs: in a private mount namespace, a /dev of its
# own holds two stand-in /dev/nvidiaN nodes (no driver behind them; nothing
# opens them). scripts/slurm-local.sh must then declare gpu:2, and
# `scripts/slurm-submit.sh --gpus-per-task 1` must give each array task one GPU
# of its own (CUDA_VISIBLE_DEVICES) and finish the run (CPU backend).
#
#   tests/slurm_gres_test.sh STYLEPIPE_BINARY SOURCE_DIR
#
# Exits 77 (skipped) when not root, without unshare, or without Slurm/munge.
set -euo pipefail

# The daemons live in /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

skip() { echo "slurm_gres: SKIP: $*"; exit 77; }
fail() { echo "slurm_gres: FAIL: $*" >&2; exit 1; }

(($# == 2)) || fail "usage: $0 STYLEPIPE_BINARY SOURCE_DIR"
bin="$1"
src="$2"
[[ -x "$bin" ]] || fail "$bin: no such executable"
[[ "$(id -u)" -eq 0 ]] || skip "needs root to start slurmctld, slurmd and munged"
for b in slurmctld slurmd munged sbatch unshare mknod; do
  command -v "$b" >/dev/null || skip "$b is not installed"
done
[[ ! -e /dev/nvidia0 ]] || skip "this machine has real GPUs: the stand-in /dev would hide them"

if [[ "${SLURM_GRES_TEST_INSIDE:-0}" != 1 ]]; then
  unshare -m --propagation private true 2>/dev/null || skip "cannot make a private mount namespace here"
  SLURM_GRES_TEST_INSIDE=1 exec unshare -m --propagation private "$0" "$@"
fi

# ---- inside the namespace: a /dev with the basics and two stand-in GPUs -----
tmp="$(mktemp -d /tmp/stylepipe-slurm-gres.XXXXXX)"
chmod 755 "$tmp"
state="$tmp/cluster"
cleanup() {
  local rc=$?
  if ((rc != 0)); then
    tail -n 20 "$state/log/slurmd.log" "$state/log/slurmctld.log" "$tmp"/out.mkv.parts/slurm/*.log 2>/dev/null || true
  fi
  "$src/scripts/slurm-local.sh" stop "$state" >/dev/null 2>&1 || echo "slurm_gres: warning: stopping the cluster failed" >&2
  umount -l /dev 2>/dev/null || true
  umount -R -l "$tmp/hostdev" 2>/dev/null || true
  # Never into the host's /dev, should it still be mounted there.
  rmdir "$tmp/hostdev" 2>/dev/null || true
  rm -rf --one-file-system "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir "$tmp/hostdev"
mount --rbind /dev "$tmp/hostdev"
mount -t tmpfs -o mode=755 stylepipe-dev /dev
for n in null zero full random urandom tty; do
  touch "/dev/$n"
  mount --bind "$tmp/hostdev/$n" "/dev/$n"
done
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mkdir /dev/shm /dev/pts
mount --rbind "$tmp/hostdev/shm" /dev/shm
mknod -m 0666 /dev/nvidia0 c 195 0
mknod -m 0666 /dev/nvidia1 c 195 1

"$src/scripts/slurm-local.sh" start "$state" >/dev/null
export SLURM_CONF="$state/slurm.conf"
grep -qx 'GresTypes=gpu' "$SLURM_CONF" || fail "slurm.conf has no GresTypes=gpu with /dev/nvidia0 present"
[[ "$(sinfo -h -o '%G')" == gpu:2 ]] || fail "the node offers '$(sinfo -h -o '%G')', expected gpu:2"

ffmpeg -hide_banner -v error -f lavfi -i testsrc2=size=160x120:rate=25 -t 2 -g 25 -c:v libx264 -pix_fmt yuv420p \
  "$tmp/in.mkv" || fail "ffmpeg could not make the test clip"
STYLEPIPE="$bin" "$src/scripts/slurm-submit.sh" "$src/configs/identity.yaml" -i "$tmp/in.mkv" -o "$tmp/out.mkv" \
  --segments 2 --backend cpu --gpus-per-task 1 --wait >"$tmp/submit.txt" \
  || fail "the run with --gpus-per-task 1 failed: $(cat "$tmp/submit.txt")"
[[ -s "$tmp/out.mkv" ]] || fail "no output"
gpus="$(sed -n 's/^task-start: .* gpus=\([^ ]*\)$/\1/p' "$tmp"/out.mkv.parts/slurm/task-*.log | sort | tr '\n' ' ')"
# One task a GPU: two tasks at once hold GPUs 0 and 1; should they not overlap, both may get 0.
[[ "$gpus" == "0 1 " || "$gpus" == "0 0 " || "$gpus" == "1 1 " ]] \
  || fail "the tasks saw CUDA_VISIBLE_DEVICES '$gpus', expected one GPU each"
echo "slurm_gres: gpu:2 declared; tasks got CUDA_VISIBLE_DEVICES: $gpus"
