#!/usr/bin/env bash
# docs/models.md's table against the model registry: the lines of the file that begin with '|'
# must be what `cflrun models` prints. With --update, writes the printed table in their place.
# Usage: models_table.sh CFLRUN DOC [--update]
set -euo pipefail
cflrun="$1"; doc="$2"; mode="${3:-}"
printed="$(mktemp)"; trap 'rm -f "$printed" "$printed.doc"' EXIT
"$cflrun" models > "$printed"
if [ "$mode" = "--update" ]; then
  # the file's text before its table, the printed table, the text after it
  awk -v table="$printed" '
    /^\|/ { if (!done) { while ((getline line < table) > 0) print line; done = 1 } ; next }
    { print }' "$doc" > "$printed.doc"
  grep -q '^|' "$doc" || { echo; cat "$printed"; } >> "$printed.doc"  # a file without a table yet
  cp "$printed.doc" "$doc"
  echo "models_table: wrote $(wc -l < "$printed") table lines into $doc"
  exit 0
fi
if ! diff <(grep '^|' "$doc") "$printed"; then
  echo "models_table: FAIL: $doc's table differs from 'cflrun models' (< the file, > the registry);"
  echo "  run: tests/integration/models_table.sh build/cflrun $doc --update"
  exit 1
fi
echo "models_table: ok ($(wc -l < "$printed") lines)"
