#!/usr/bin/env bash
# Runs a command as root in a real Debian 13 (trixie) root, made with
# debootstrap from Debian's registry, with this checkout bind-mounted at /src
# (the command starts there). The root gets stylepipe's dependencies through
# the project's own scripts/install-deps.sh, so what it proves is what a user
# of Debian 13 gets from the README. CI runs its CPU-only sanitizer phases in it.
#
# Usage: scripts/in-debian13.sh COMMAND [ARG...]
#   DEBIAN13_ROOT  where the root lives (default /var/tmp/stylepipe-debian13);
#                  a root already made there, for the same dependency list, is reused
#   DEBIAN_MIRROR  the registry (default: the one this machine's apt uses)
#   DEBIAN13_CUDA  1: this machine's CUDA toolkit (/usr/local/cuda) is bound
#                  into the root, read-only (CI's CUDA-memory compile check)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
root=${DEBIAN13_ROOT:-/var/tmp/stylepipe-debian13}
if [ "$(id -u)" -ne 0 ]; then
  echo "in-debian13: needs root (debootstrap, chroot and bind mounts)" >&2
  exit 77
fi
if [ -z "${DEBIAN_MIRROR:-}" ]; then
  DEBIAN_MIRROR=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | grep -oE 'https?://[^ ]+' | head -n 1 || true)
  DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
fi
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap

# A root is ready once install-deps.sh ran in it for this very list; the
# stamp holds the script's hash, so a changed list installs again.
stamp="$root/.stylepipe-deps"
want=$(sha256sum scripts/install-deps.sh | cut -d' ' -f1)

mounts=()
unmount_all() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
}
trap unmount_all EXIT
bind() {  # host path, path inside the root
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounts+=("$root$2")
}

if [ ! -x "$root/usr/bin/apt-get" ]; then
  rm -rf "$root"
  start=$SECONDS
  echo "in-debian13: debootstrap trixie into $root from $DEBIAN_MIRROR"
  debootstrap --variant=minbase trixie "$root" "$DEBIAN_MIRROR" >"$root.debootstrap.log" 2>&1 || {
    tail -n 30 "$root.debootstrap.log" >&2
    exit 1
  }
  echo "in-debian13: debootstrap took $((SECONDS - start)) s"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
bind /dev /dev
bind /dev/pts /dev/pts
bind /sys /sys
mount -t tmpfs tmpfs "$root/tmp" && mounts+=("$root/tmp")
mount -t tmpfs tmpfs "$root/dev/shm" && mounts+=("$root/dev/shm")
bind "$src" /src
if [ "${DEBIAN13_CUDA:-}" = 1 ] && [ -d /usr/local/cuda/include ]; then
  bind "$(readlink -f /usr/local/cuda)" /usr/local/cuda
  mount -o remount,bind,ro "$root/usr/local/cuda"
fi

in_root() { chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CI="${CI:-}" \
  JOBS="${JOBS:-}" FUZZ_SECONDS="${FUZZ_SECONDS:-}" CUDA_ARCHS="${CUDA_ARCHS:-}" \
  CHECKS_CMAKE_ARGS="${CHECKS_CMAKE_ARGS:-}" SANITIZER_CXX="${SANITIZER_CXX:-}" "$@"; }

if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  start=$SECONDS
  # Services that packages start (munge, slurm) must not start in a chroot.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod +x "$root/usr/sbin/policy-rc.d"
  in_root bash -c 'cd /src && scripts/install-deps.sh' >"$root.deps.log" 2>&1 || {
    tail -n 40 "$root.deps.log" >&2
    exit 1
  }
  echo "$want" >"$stamp"
  echo "in-debian13: dependencies installed in $((SECONDS - start)) s"
fi
echo "in-debian13: $(in_root sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), gcc $(in_root gcc -dumpversion)," \
  "FFmpeg $(in_root pkg-config --modversion libavcodec) (libavcodec), CLI11 $(in_root dpkg-query -W -f='${Version}' libcli11-dev)"
in_root bash -c 'cd /src && exec "$@"' in-debian13 "$@"
