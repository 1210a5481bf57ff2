#!/usr/bin/env bash
# Regenerates the committed bindings (src/generated/, standin/src/generated/) from the
# pinned CUDA headers, the nvidia-cuda-runtime==13.5.37 wheel's cuda.h and cudaTypedefs.h.
#
#   scripts/regenerate.sh            regenerate in place
#   scripts/regenerate.sh --check    regenerate, and fail if the result differs from git
#
# Needs libclang (Debian: libclang-dev) and, unless CUDRV_CUDA_INCLUDE names a folder that
# holds both headers, pip to download the wheel (kept in .headers/, which git ignores).
set -euo pipefail
cd "$(dirname "$0")/.."

PINNED_WHEEL="nvidia-cuda-runtime==13.5.37"
include="${CUDRV_CUDA_INCLUDE:-}"
if [ -z "$include" ]; then
  include=".headers/${PINNED_WHEEL#*==}/include"
  scripts/fetch-headers.sh "$PINNED_WHEEL" "$include"
fi

cargo run --quiet -p cudrv-gen -- --include "$include" --out src/generated --standin-out standin/src/generated

if [ "${1:-}" = "--check" ]; then
  if ! git diff --exit-code --stat -- src/generated standin/src/generated; then
    echo "regenerate.sh: the committed bindings differ from what the pinned headers give; run scripts/regenerate.sh and commit" >&2
    exit 1
  fi
  untracked=$(git ls-files --others --exclude-standard -- src/generated standin/src/generated)
  if [ -n "$untracked" ]; then
    echo "regenerate.sh: generated files not committed: $untracked" >&2
    exit 1
  fi
  echo "regenerate.sh: committed bindings match the pinned headers"
fi
