#!/usr/bin/env bash
# Regenerates the committed bindings (src/generated/, standin/src/generated/) from the
# pinned CUDA headers, the nvidia-cuda-runtime==13.5.37 wheel's cuda.h and cudaTypedefs.h;
# the stand-in's exports of the profiler and graphics-interop entry points from that wheel's
# cudaGL*.h, cudaEGL*.h, cudaVDPAU*.h, cudaProfilerTypedefs.h and the
# nvidia-cuda-profiler-api==13.5.25 wheel's cudaProfiler.h (gen/src/interop.rs).
#
#   scripts/regenerate.sh            regenerate in place
#   scripts/regenerate.sh --check    regenerate, and fail if the result differs from git
#
# Needs libclang (Debian: libclang-dev) and, unless CUDRV_CUDA_INCLUDE names a folder that
# holds both headers, pip to download the wheel (kept in .headers/, which git ignores).
set -euo pipefail
cd "$(dirname "$0")/.."

PINNED_WHEEL="nvidia-cuda-runtime==13.5.37"
PINNED_PROFILER_WHEEL="nvidia-cuda-profiler-api==13.5.25"
include="${CUDRV_CUDA_INCLUDE:-}"
if [ -z "$include" ]; then
  include=".headers/${PINNED_WHEEL#*==}/include"
  scripts/fetch-headers.sh "$PINNED_WHEEL" "$include" cuda.h cudaTypedefs.h \
    cudaGL.h cudaGLTypedefs.h cudaEGL.h cudaEGLTypedefs.h cudaVDPAU.h cudaVDPAUTypedefs.h cudaProfilerTypedefs.h
  scripts/fetch-headers.sh "$PINNED_PROFILER_WHEEL" "$include" cudaProfiler.h
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
