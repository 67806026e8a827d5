#!/usr/bin/env bash
# Layers depend downward only: pipeline <- codecs, stages <- orchestration <-
# api (the public API: include/stylepipe/ and its implementation) <- the front
# ends (cli, python, gstreamer), which include nothing but the public headers.
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
forbid pipeline codecs stages orchestration api stylepipe cli
forbid codecs stages orchestration api stylepipe cli
forbid stages codecs orchestration api stylepipe cli
forbid orchestration api stylepipe cli
forbid api cli
forbid include/stylepipe pipeline codecs stages orchestration api cli

# A front end's own files include its own headers and the public ones only.
front_end() {  # folder
  local folder=$1 hits
  [ -d "$folder" ] || return 0
  hits=$(grep -rn --include='*.h' --include='*.cpp' --include='*.c' -e '#include "' "$folder" |
           grep -v -e "#include \"\(stylepipe\|$folder\)/" | grep -v '_test\.\(cpp\|cu\):' || true)
  if [ -n "$hits" ]; then
    echo "check-layers: $folder is a front end: it includes only stylepipe/ (the public API) and its own headers:" >&2
    echo "$hits" >&2
    status=1
  fi
}
front_end cli
front_end python
front_end gstreamer
[ $status -eq 0 ] && echo "check-layers: pipeline <- codecs, stages <- orchestration <- api <- cli, python, gstreamer holds"
exit $status
