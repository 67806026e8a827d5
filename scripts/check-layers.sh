#!/usr/bin/env bash
# Layers depend downward only: pipeline <- codecs, stages <- orchestration <- cli.
# Stage code never sees codecs, codecs never see stages. Test files may reach
# sideways for fixtures (a stage test decoding a PNG), so they are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
forbid() {  # folder, the folders it must not include
  local folder=$1; shift
  local pattern
  pattern=$(printf '%s\\|' "$@")
  pattern=${pattern%\\|}
  local hits
  hits=$(grep -rn --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' \
           -e "#include \"\\($pattern\\)/" "$folder" | grep -v '_test\.\(cpp\|cu\):\|_test_util\.h:' || true)
  if [ -n "$hits" ]; then
    echo "check-layers: $folder reaches up or sideways:" >&2
    echo "$hits" >&2
    status=1
  fi
}
forbid pipeline codecs stages orchestration cli
forbid codecs stages orchestration cli
forbid stages codecs orchestration cli
forbid orchestration cli
[ $status -eq 0 ] && echo "check-layers: pipeline <- codecs, stages <- orchestration <- cli holds"
exit $status
