#!/usr/bin/env bash
# check-target-paths.sh [PATH...]: fails if a script names a path in cargo's target
# directory literally (`target/debug/...`, `./target/release/...`): with CARGO_TARGET_DIR
# or build.target-dir set, cargo builds elsewhere and such a script fails (exit 127) or
# runs a stale binary. Scripts ask cargo instead:
#
#   target=$(cargo metadata --format-version 1 --no-deps \
#     | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
#   "$target/debug/cudrv-gen" ...
#
# Checks every file under PATH (default: scripts and .ci). Comment lines are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- scripts .ci
for p in "$@"; do
  [ -e "$p" ] || { echo "check-target-paths.sh: $p does not exist" >&2; exit 2; }
done

# "target/" not preceded by a word character or `$` (so "$target/release" is fine);
# written as target[/] so that this line does not match itself.
pattern='(^|[^$[:alnum:]_])target[/]'
found=$(grep -rnHIE "$pattern" -- "$@" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' || true)
if [ -n "$found" ]; then
  printf '%s\n' "$found" >&2
  echo "check-target-paths.sh: these lines name cargo's target directory literally; ask cargo" \
    "for it (cargo metadata --format-version 1 --no-deps: target_directory), as" \
    "scripts/check-defaults.sh does" >&2
  exit 1
fi
echo "check-target-paths: no literal path into the target directory in $*"
