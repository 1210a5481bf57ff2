#!/usr/bin/env bash
# check-docs.sh: builds the documentation of cudrv, cudrv-standin and cudrv-ptx as docs.rs does
# (rustdoc warnings, broken links and missing docs are errors) and checks what the crate
# pages list:
#
# - cudrv's crate page lists every public type (struct, enum, trait, type alias, union)
#   under its own heading, except the raw C types of `cudrv::sys` and the generated
#   table's types (`cudrv::table`), which their module pages list;
# - the same for cudrv-standin's crate page (every public type);
# - cudrv-standin's documentation shows none of the C driver API it exports (`cu*`
#   symbols: `#[doc(hidden)]`).
#
#   scripts/check-docs.sh
#
# Honours CARGO_TARGET_DIR (the target directory is asked of cargo). No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."

RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --quiet --no-deps -p cudrv -p cudrv-standin -p cudrv-ptx

target=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
doc="$target/doc"
failed=0

# check_listed CRATE EXCLUDED_MODULES_REGEX: every type of CRATE's all.html outside the
# excluded modules has its page linked from the crate page, at the crate root.
check_listed() {
  local crate=$1 excluded=$2 all="$doc/$1/all.html" index="$doc/$1/index.html"
  for f in "$all" "$index"; do
    [ -f "$f" ] || { echo "check-docs: $f was not generated" >&2; exit 1; }
  done
  local types
  types=$(grep -oE 'href="[A-Za-z0-9_/]*(struct|enum|trait|type|union)\.[A-Za-z0-9_]+\.html"' "$all" |
    sed -E 's/^href="//; s/"$//' | sort -u)
  [ -n "$types" ] || { echo "check-docs: no types found in $all" >&2; exit 1; }
  local page name checked=0
  while read -r page; do
    if [ -n "$excluded" ] && grep -qE "^($excluded)/" <<<"$page"; then
      continue
    fi
    checked=$((checked + 1))
    name=$(basename "$page")
    if ! grep -qF "href=\"$name\"" "$index"; then
      echo "check-docs: $crate's crate page does not list ${page%.html} (${name%.html}):" \
        "re-export it at the crate root (#[doc(inline)] from a public module)" >&2
      failed=1
    fi
  done <<<"$types"
  echo "check-docs: $crate: $checked public types checked"
}

check_listed cudrv 'sys|table'
check_listed cudrv_standin ''

# No C symbol of the driver API in the stand-in's documentation. all.html and the crate
# page are rewritten at every build (pages of items no longer documented may stay behind
# in the target directory: they are not looked at).
if listed=$(grep -ohE '(fn|static|constant)\.cu[A-Z][A-Za-z0-9_]*\.html' "$doc/cudrv_standin/all.html" "$doc/cudrv_standin/index.html" | sort -u | grep .); then
  echo "check-docs: the stand-in's documentation lists C symbols of the driver API (add #[doc(hidden)]):" $listed >&2
  failed=1
fi

if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "check-docs: ok"
