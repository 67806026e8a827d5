#!/usr/bin/env bash
# Makes stylepipe's man page from the CLI's own help: help2man reads
# `stylepipe --help` and `--version`; each subcommand's --help becomes a
# subsection of SUBCOMMANDS. Gzipped for /usr/share/man/man1.
# Usage: make-man-page.sh HELP2MAN BINARY OUT.1.gz
set -euo pipefail
help2man=$1 binary=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

subcommands=$("$binary" --help | awk '/^Subcommands:/ { listing = 1; next } listing && NF { print $1 }')
[ -n "$subcommands" ] || { echo "make-man-page: $binary --help lists no subcommands" >&2; exit 1; }
{
  echo "[SUBCOMMANDS]"
  for command in $subcommands; do
    echo ".SS $command"
    echo ".nf"
    # roff: a backslash is \e; a line starting with . or ' would be a request.
    "$binary" "$command" --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    echo ".fi"
  done
  echo "[FILES]"
  echo "/usr/share/stylepipe/configs: ready configs (pencil, lowpoly, stipple, xbr-live, ...)."
} >"$work/subcommands.h2m"

"$help2man" --no-info --no-discard-stderr --section 1 --name "video stylization pipeline" \
  --include "$work/subcommands.h2m" --output "$work/stylepipe.1" "$binary"
gzip -9 -n -c "$work/stylepipe.1" >"$out"
