#!/usr/bin/env bash
# The committed schema that editors read (configs/stylepipe.schema.json) must
# be what `stylepipe schema` prints from the tables of this build.
# Usage: check_schema_file.sh STYLEPIPE SCHEMA_FILE
set -euo pipefail
stylepipe=$1 schema_file=$2
if ! "$stylepipe" schema | diff -u "$schema_file" - >&2; then
  echo "check_schema_file: $schema_file is out of date with \`stylepipe schema\` (diff above);" \
       "remake it: $stylepipe schema > $schema_file" >&2
  exit 1
fi
echo "check_schema_file: $schema_file matches \`stylepipe schema\`"
